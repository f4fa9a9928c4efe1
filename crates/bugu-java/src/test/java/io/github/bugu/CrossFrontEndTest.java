package io.github.bugu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One key, one meaning: a file the {@code bugu} command writes answers the same in Java, text
 * (with non-ASCII and emoji) and integer keys alike, false positives included; and a file Java
 * writes answers the same in the command and in Python. The command is {@code $BUGU_CLI} and
 * Python (with bugu installed) {@code $BUGU_PYTHON}; scripts/test sets both.
 */
class CrossFrontEndTest {
    private static final List<String> TEXT = new ArrayList<>();
    private static final List<String> ABSENT = new ArrayList<>();
    private static final long[] INTS = new long[1_010];

    static {
        for (int i = 0; i < 3_000; i++) {
            TEXT.add(i % 3 == 0 ? "用户_" + i : i % 5 == 0 ? "bird \uD83D\uDC26 " + i : "user_" + i);
        }
        for (int i = 0; i < 20_000; i++) {
            ABSENT.add("nobody_" + i);
        }
        long[] edges = {0, 1, 42, -1, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 32, Integer.MIN_VALUE, Integer.MAX_VALUE, 7};
        System.arraycopy(edges, 0, INTS, 0, edges.length);
        for (int i = 0; i < 1_000; i++) {
            INTS[edges.length + i] = 1_000 + i;
        }
    }

    private static Path program(String variable) {
        String value = System.getenv(variable);
        if (value == null || !Files.isExecutable(Path.of(value))) {
            throw new IllegalStateException("set $" + variable + " (scripts/test does): got " + value);
        }
        return Path.of(value);
    }

    /** An integer key as the command's {@code --hex} takes it: its 8 bytes little-endian. */
    private static String hex(long value) {
        StringBuilder out = new StringBuilder(16);
        for (int i = 0; i < 8; i++) {
            out.append(String.format("%02x", (value >>> (8 * i)) & 0xff));
        }
        return out.toString();
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        byte[] out = process.getInputStream().readAllBytes();
        int status = process.waitFor();
        if (status != 0 && status != 1) {
            throw new IOException(command + " exited with " + status);
        }
        return new String(out, StandardCharsets.UTF_8);
    }

    /** What {@code bugu check} answers for each probe (it prints back the present ones). */
    private static boolean[] cliCheck(Path file, List<String> probes, Path dir, boolean hexKeys) throws Exception {
        Path list = dir.resolve("probes.txt");
        Files.write(list, probes, StandardCharsets.UTF_8);
        List<String> command = new ArrayList<>(List.of(program("BUGU_CLI").toString(), "check", file.toString(), "--input", list.toString()));
        if (hexKeys) {
            command.add("--hex");
        }
        Set<String> printed = new HashSet<>(List.of(run(command).split("\n")));
        boolean[] answers = new boolean[probes.size()];
        for (int i = 0; i < answers.length; i++) {
            answers[i] = printed.contains(probes.get(i));
        }
        return answers;
    }

    private static List<String> hexes(long[] values) {
        List<String> out = new ArrayList<>();
        for (long value : values) {
            out.add(hex(value));
        }
        return out;
    }

    private static long[] range(long from, long to) {
        long[] out = new long[(int) (to - from)];
        for (int i = 0; i < out.length; i++) {
            out[i] = from + i;
        }
        return out;
    }

    private static List<String> probes() {
        List<String> all = new ArrayList<>(TEXT);
        all.addAll(ABSENT);
        return all;
    }

    @Test
    void aFileTheCliWritesAnswersTheSameInJava(@TempDir Path dir) throws Exception {
        for (boolean growable : new boolean[] {false, true}) {
            Path file = dir.resolve(growable ? "growable.bugu" : "fixed.bugu");
            List<String> create = new ArrayList<>(List.of(program("BUGU_CLI").toString(), "create", file.toString()));
            create.addAll(growable ? List.of("--growable", "-n", "500") : List.of("-n", "5000"));
            create.addAll(List.of("--fpr", "0.01", "--seed", "11"));
            run(create);
            Path keys = dir.resolve("keys.txt");
            Files.write(keys, TEXT, StandardCharsets.UTF_8);
            run(List.of(program("BUGU_CLI").toString(), "add", file.toString(), "--input", keys.toString()));
            Path ints = dir.resolve("ints.txt");
            Files.write(ints, hexes(INTS), StandardCharsets.UTF_8);
            run(List.of(program("BUGU_CLI").toString(), "add", file.toString(), "--hex", "--input", ints.toString()));

            List<String> probes = probes();
            boolean[] expected = cliCheck(file, probes, dir, false);
            long[] intProbes = range(-5_000, 5_000);
            boolean[] expectedInts = cliCheck(file, hexes(intProbes), dir, true);
            try (ReadableFilter view = FilterView.open(file)) {
                assertArrayEquals(expected, view.containsAll(probes.toArray(new String[0])), "a view, growable " + growable);
                assertArrayEquals(expectedInts, view.containsAll(intProbes), "a view, integers, growable " + growable);
            }
            try (NativeFilter filter = growable ? GrowableFilter.load(file) : CuckooFilter.load(file)) {
                assertArrayEquals(expected, filter.containsAll(probes.toArray(new String[0])), "text, growable " + growable);
                for (int i = 0; i < 500; i++) {
                    assertEquals(expected[i], filter.contains(probes.get(i)));
                    assertEquals(expected[i], filter.contains(probes.get(i).getBytes(StandardCharsets.UTF_8)));
                }
                assertArrayEquals(expectedInts, filter.containsAll(intProbes), "integers, growable " + growable);
                for (boolean present : filter.containsAll(INTS)) {
                    assertTrue(present);
                }
                int falsePositives = 0;
                for (int i = TEXT.size(); i < expected.length; i++) {
                    falsePositives += expected[i] ? 1 : 0;
                }
                assertTrue(falsePositives > 0 && falsePositives < 0.03 * ABSENT.size(), falsePositives + " false positives");
            }
        }
    }

    @Test
    void aFileJavaWritesAnswersTheSameInTheCliAndInPython(@TempDir Path dir) throws Exception {
        Path python = program("BUGU_PYTHON");
        for (boolean growable : new boolean[] {false, true}) {
            Path file = dir.resolve("java.bugu");
            NativeFilter filter = growable
                    ? new GrowableFilter(500, 0.01)
                    : CuckooFilter.builder().capacity(5_000).falsePositiveRate(0.01).seed(5).build();
            try (filter) {
                filter.insertAll(TEXT.toArray(new String[0]));
                filter.insertAll(INTS);
                filter.save(file);
                List<String> probes = probes();
                boolean[] answers = filter.containsAll(probes.toArray(new String[0]));
                assertArrayEquals(answers, cliCheck(file, probes, dir, false), "the command, growable " + growable);
                long[] intProbes = range(-5_000, 5_000);
                boolean[] intAnswers = filter.containsAll(intProbes);
                assertArrayEquals(intAnswers, cliCheck(file, hexes(intProbes), dir, true), "the command, integers");

                Path texts = dir.resolve("texts.txt");
                Files.write(texts, probes, StandardCharsets.UTF_8);
                String script = "import sys, bugu\n"
                        + "f = bugu.open(sys.argv[1])\n"
                        + "texts = open(sys.argv[2], encoding='utf-8').read().split('\\n')[:-1]\n"
                        + "print(''.join('1' if x else '0' for x in f.contains_many(texts)))\n"
                        + "print(''.join('1' if x else '0' for x in f.contains_many(range(-5000, 5000))))\n";
                String[] printed = run(List.of(python.toString(), "-c", script, file.toString(), texts.toString())).split("\n");
                assertEquals(bits(answers), printed[0], "Python, text, growable " + growable);
                assertEquals(bits(intAnswers), printed[1], "Python, integers, growable " + growable);
            }
        }
    }

    private static String bits(boolean[] answers) {
        StringBuilder out = new StringBuilder(answers.length);
        for (boolean answer : answers) {
            out.append(answer ? '1' : '0');
        }
        return out.toString();
    }
}
