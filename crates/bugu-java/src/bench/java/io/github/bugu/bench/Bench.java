package io.github.bugu.bench;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.github.bugu.CuckooFilter;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * bugu's Java binding against Guava's {@code BloomFilter} and a cuckoo filter in plain Java
 * ({@link JavaCuckooFilter}), for {@code long} and {@code String} keys at a target rate of 0.1%:
 * one-by-one inserts and lookups, batched lookups, two threads' lookups, bits per key and the
 * measured false-positive rate. Each size runs a warm-up round, then {@code --rounds} rounds with
 * the contenders' order turned each round; medians.
 *
 * <pre>scripts/bench-java [--sizes 1e6,1e7] [--rounds 3]</pre>
 */
public final class Bench {
    private static final double RATE = 0.001;

    private Bench() {}

    public static void main(String[] args) throws Exception {
        List<Integer> sizes = List.of(1_000_000, 10_000_000);
        int rounds = 3;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--sizes" -> {
                    List<Integer> parsed = new ArrayList<>();
                    for (String size : args[++i].split(",")) {
                        parsed.add((int) Double.parseDouble(size));
                    }
                    sizes = parsed;
                }
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("usage: Bench [--sizes 1e6,1e7] [--rounds 3]");
            }
        }
        System.out.printf("bugu Java binding vs Guava %s BloomFilter and a plain-Java cuckoo filter; rate %.3f; %s; %d cores%n%n",
                BloomFilter.class.getPackage().getImplementationVersion(), RATE, System.getProperty("java.vm.name") + " "
                        + System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
        measure(100_000, 1, true);
        System.out.println("| keys | key | filter | insert ns | contains present ns | contains absent ns | batched contains ns | 2 threads / 1 | bits/key | FPR | false neg. |");
        System.out.println("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (int n : sizes) {
            measure(n, rounds, false);
        }
    }

    /** One contender's figures in one round. */
    record Figures(double insert, double present, double absent, double batched, double scaling, double bits, double fpr, long falseNegatives) {}

    private static void measure(int n, int rounds, boolean warmUp) throws Exception {
        SplittableRandom random = new SplittableRandom(42);
        long[] present = random.longs(n).toArray();
        long[] absent = random.longs(n).toArray();
        for (String keyType : List.of("long", "String")) {
            String[] presentText = keyType.equals("String") ? text(present) : null;
            String[] absentText = keyType.equals("String") ? text(absent) : null;
            Map<String, List<Figures>> all = new LinkedHashMap<>();
            for (int round = 0; round < rounds; round++) {
                List<String> order = new ArrayList<>(List.of("Guava BloomFilter", "bugu CuckooFilter", "plain-Java cuckoo"));
                java.util.Collections.rotate(order, round);
                for (String name : order) {
                    Figures figures = switch (name) {
                        case "Guava BloomFilter" -> keyType.equals("long") ? guavaLongs(present, absent) : guavaText(presentText, absentText);
                        case "bugu CuckooFilter" -> keyType.equals("long") ? buguLongs(present, absent) : buguText(presentText, absentText);
                        default -> keyType.equals("long") ? javaLongs(present, absent) : javaText(presentText, absentText);
                    };
                    all.computeIfAbsent(name, k -> new ArrayList<>()).add(figures);
                }
            }
            if (warmUp) {
                continue;
            }
            Map<String, Figures> medians = new LinkedHashMap<>();
            for (Map.Entry<String, List<Figures>> entry : all.entrySet()) {
                Figures m = median(entry.getValue());
                medians.put(entry.getKey(), m);
                System.out.printf("| %,d | %s | %s | %.1f | %.1f | %.1f | %s | %s | %.2f | %.4f%% | %d |%n", n, keyType, entry.getKey(), m.insert,
                        m.present, m.absent, Double.isNaN(m.batched) ? "" : String.format("%.1f", m.batched),
                        Double.isNaN(m.scaling) ? "" : String.format("%.2f", m.scaling), m.bits, 100 * m.fpr, m.falseNegatives);
            }
            Figures guava = medians.get("Guava BloomFilter");
            Figures bugu = medians.get("bugu CuckooFilter");
            System.out.printf("|   | %s ratios | bugu / Guava | insert %.2f | present %.2f | absent %.2f | batched / Guava loop %.2f | %.2f | bits %.2f | | |%n",
                    keyType, bugu.insert / guava.insert, bugu.present / guava.present, bugu.absent / guava.absent,
                    bugu.batched / guava.absent, bugu.scaling, bugu.bits / guava.bits);
        }
    }

    private static String[] text(long[] keys) {
        String[] out = new String[keys.length];
        for (int i = 0; i < keys.length; i++) {
            out[i] = "user:" + Long.toHexString(keys[i]);
        }
        return out;
    }

    private static Figures median(List<Figures> all) {
        return new Figures(med(all, Figures::insert), med(all, Figures::present), med(all, Figures::absent), med(all, Figures::batched),
                med(all, Figures::scaling), med(all, Figures::bits), med(all, Figures::fpr), all.stream().mapToLong(Figures::falseNegatives).max().orElse(0));
    }

    private static double med(List<Figures> all, java.util.function.ToDoubleFunction<Figures> field) {
        double[] values = all.stream().mapToDouble(field).sorted().toArray();
        return values[values.length / 2];
    }

    /** Nanoseconds per operation of {@code body} over {@code ops} operations. */
    private static double time(int ops, Runnable body) {
        long start = System.nanoTime();
        body.run();
        return (System.nanoTime() - start) / (double) ops;
    }

    private static long sink;

    private static Figures guavaLongs(long[] present, long[] absent) throws Exception {
        BloomFilter<Long> filter = BloomFilter.create(Funnels.longFunnel(), present.length, RATE);
        double insert = time(present.length, () -> { for (long k : present) filter.put(k); });
        long[] found = new long[2];
        double hit = time(present.length, () -> { long c = 0; for (long k : present) c += filter.mightContain(k) ? 1 : 0; found[0] = c; });
        double miss = time(absent.length, () -> { long c = 0; for (long k : absent) c += filter.mightContain(k) ? 1 : 0; found[1] = c; });
        return new Figures(insert, hit, miss, Double.NaN, Double.NaN, guavaBits(filter, present.length), found[1] / (double) absent.length, present.length - found[0]);
    }

    private static Figures guavaText(String[] present, String[] absent) throws Exception {
        BloomFilter<CharSequence> filter = BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), present.length, RATE);
        double insert = time(present.length, () -> { for (String k : present) filter.put(k); });
        long[] found = new long[2];
        double hit = time(present.length, () -> { long c = 0; for (String k : present) c += filter.mightContain(k) ? 1 : 0; found[0] = c; });
        double miss = time(absent.length, () -> { long c = 0; for (String k : absent) c += filter.mightContain(k) ? 1 : 0; found[1] = c; });
        return new Figures(insert, hit, miss, Double.NaN, Double.NaN, guavaBits(filter, present.length), found[1] / (double) absent.length, present.length - found[0]);
    }

    /** Guava's bits per key, from its serialized form (its bit array and a few header bytes). */
    private static <T> double guavaBits(BloomFilter<T> filter, int n) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        filter.writeTo(out);
        return out.size() * 8.0 / n;
    }

    private static Figures buguLongs(long[] present, long[] absent) throws Exception {
        try (CuckooFilter filter = CuckooFilter.builder().capacity(present.length).falsePositiveRate(RATE).build()) {
            double insert = time(present.length, () -> { for (long k : present) filter.insert(k); });
            long[] found = new long[2];
            double hit = time(present.length, () -> { long c = 0; for (long k : present) c += filter.contains(k) ? 1 : 0; found[0] = c; });
            double miss = time(absent.length, () -> { long c = 0; for (long k : absent) c += filter.contains(k) ? 1 : 0; found[1] = c; });
            double batched = time(absent.length, () -> { for (int i = 0; i < absent.length; i += 4096) sink += filter.containsAll(Arrays.copyOfRange(absent, i, Math.min(absent.length, i + 4096))).length; });
            double scaling = scaling(() -> { long c = 0; for (long k : absent) c += filter.contains(k) ? 1 : 0; sink += c; });
            return new Figures(insert, hit, miss, batched, scaling, filter.toByteArray().length * 8.0 / present.length, found[1] / (double) absent.length, present.length - found[0]);
        }
    }

    private static Figures buguText(String[] present, String[] absent) throws Exception {
        try (CuckooFilter filter = CuckooFilter.builder().capacity(present.length).falsePositiveRate(RATE).build()) {
            double insert = time(present.length, () -> { for (String k : present) filter.insert(k); });
            long[] found = new long[2];
            double hit = time(present.length, () -> { long c = 0; for (String k : present) c += filter.contains(k) ? 1 : 0; found[0] = c; });
            double miss = time(absent.length, () -> { long c = 0; for (String k : absent) c += filter.contains(k) ? 1 : 0; found[1] = c; });
            double batched = time(absent.length, () -> { for (int i = 0; i < absent.length; i += 4096) sink += filter.containsAll(Arrays.copyOfRange(absent, i, Math.min(absent.length, i + 4096))).length; });
            double scaling = scaling(() -> { long c = 0; for (String k : absent) c += filter.contains(k) ? 1 : 0; sink += c; });
            return new Figures(insert, hit, miss, batched, scaling, filter.toByteArray().length * 8.0 / present.length, found[1] / (double) absent.length, present.length - found[0]);
        }
    }

    /**
     * Two threads' throughput over one thread's, each thread running {@code lookups} whole: the
     * median of 3 alternations (one alternation alone moved from 1.0 to 2.3 between runs, with
     * the JIT and the machine's other tenants sharing the two cores).
     */
    private static double scaling(Runnable lookups) throws InterruptedException {
        double[] ratios = new double[3];
        for (int i = 0; i < ratios.length; i++) {
            long start = System.nanoTime();
            lookups.run();
            double one = System.nanoTime() - start;
            Thread first = new Thread(lookups);
            Thread second = new Thread(lookups);
            start = System.nanoTime();
            first.start();
            second.start();
            first.join();
            second.join();
            ratios[i] = 2 * one / (System.nanoTime() - start);
        }
        Arrays.sort(ratios);
        return ratios[1];
    }

    private static Figures javaLongs(long[] present, long[] absent) {
        JavaCuckooFilter filter = new JavaCuckooFilter(present.length, 13);
        long[] lost = new long[1];
        double insert = time(present.length, () -> { for (long k : present) lost[0] += filter.insert(JavaCuckooFilter.mix(k)) ? 0 : 1; });
        long[] found = new long[2];
        double hit = time(present.length, () -> { long c = 0; for (long k : present) c += filter.contains(JavaCuckooFilter.mix(k)) ? 1 : 0; found[0] = c; });
        double miss = time(absent.length, () -> { long c = 0; for (long k : absent) c += filter.contains(JavaCuckooFilter.mix(k)) ? 1 : 0; found[1] = c; });
        return new Figures(insert, hit, miss, Double.NaN, Double.NaN, filter.bytes() * 8.0 / present.length, found[1] / (double) absent.length, present.length - found[0]);
    }

    private static Figures javaText(String[] present, String[] absent) {
        JavaCuckooFilter filter = new JavaCuckooFilter(present.length, 13);
        double insert = time(present.length, () -> { for (String k : present) filter.insert(JavaCuckooFilter.hash(k)); });
        long[] found = new long[2];
        double hit = time(present.length, () -> { long c = 0; for (String k : present) c += filter.contains(JavaCuckooFilter.hash(k)) ? 1 : 0; found[0] = c; });
        double miss = time(absent.length, () -> { long c = 0; for (String k : absent) c += filter.contains(JavaCuckooFilter.hash(k)) ? 1 : 0; found[1] = c; });
        return new Figures(insert, hit, miss, Double.NaN, Double.NaN, filter.bytes() * 8.0 / present.length, found[1] / (double) absent.length, present.length - found[0]);
    }
}
