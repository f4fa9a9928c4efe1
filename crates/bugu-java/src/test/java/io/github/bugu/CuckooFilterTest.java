package io.github.bugu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CuckooFilterTest {
    @Test
    void theFamiliarShapeAddsFindsAndDeletes() {
        try (CuckooFilter filter = new CuckooFilter(10_000, 12)) {
            assertTrue(filter.insert("alice"));
            assertTrue(filter.contains("alice"));
            assertEquals(1, filter.size());
            assertTrue(filter.delete("alice"));
            assertFalse(filter.contains("alice"));
            assertEquals(0, filter.size());
            assertEquals(0L, filter.longSize());
        }
    }

    @Test
    void aStringIsItsUtf8BytesAndAnIntItsLong() {
        try (CuckooFilter filter = CuckooFilter.builder().capacity(1_000).falsePositiveRate(0.0001).build()) {
            String[] texts = {"plain", "with\u0000nul", "emoji \uD83D\uDC26", "中文"};
            for (String text : texts) {
                filter.insert(text);
                assertTrue(filter.contains(text.getBytes(StandardCharsets.UTF_8)), text);
                assertEquals(1, filter.count(text.getBytes(StandardCharsets.UTF_8)), text);
            }
            filter.insert(7);
            assertTrue(filter.contains(7L));
            assertEquals(1, filter.count(7L));
            assertTrue(filter.delete(7L));
            assertFalse(filter.contains(7));
        }
    }

    @Test
    void aStringIsTheSameKeyShortOrLongAsTextOrAsBytes() {
        String cjk85 = "中".repeat(85);
        String[] texts = {"", "x\uD800y", "\uDC00", "a\u0000b", "\uD83D\uDC26".repeat(42), cjk85, cjk85 + "文",
                "long ".repeat(40), "\uD83D\uDC26".repeat(43)};
        try (CuckooFilter filter = CuckooFilter.builder().capacity(1_000).falsePositiveRate(0.0001).build()) {
            for (String text : texts) {
                byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
                assertTrue(filter.insert(text), text);
                assertTrue(filter.contains(utf8), text);
                assertEquals(1, filter.count(text), text);
                assertTrue(filter.delete(utf8), text);
                assertFalse(filter.contains(text), text);
                assertTrue(filter.insert(utf8), text);
                assertTrue(filter.insertUnique(text) == false, text);
                assertTrue(filter.delete(text), text);
            }
            assertEquals(0, filter.size());
        }
    }

    @Test
    void noFalseNegativeAndTheRateUnderTheTarget() {
        int n = 100_000;
        try (CuckooFilter filter = CuckooFilter.builder().capacity(n).falsePositiveRate(0.001).build()) {
            for (long i = 0; i < n; i++) {
                assertTrue(filter.insert(i));
            }
            for (long i = 0; i < n; i++) {
                assertTrue(filter.contains(i), "key " + i);
            }
            int falsePositives = 0;
            for (long i = n; i < 11L * n; i++) {
                falsePositives += filter.contains(i) ? 1 : 0;
            }
            assertTrue(falsePositives <= 0.001 * 10 * n, falsePositives + " false positives in " + 10 * n);
        }
    }

    @Test
    void batchesAnswerAsOneByOne() {
        try (CuckooFilter filter = CuckooFilter.builder().capacity(10_000).build()) {
            long[] longs = {1, 2, 3, 1L << 40};
            assertArrayEquals(new boolean[] {true, true, true, true}, filter.insertAll(longs));
            assertArrayEquals(new boolean[] {true, true, false}, filter.containsAll(new long[] {1, 1L << 40, 99}));
            String[] texts = {"a", "b", "\uD83D\uDC26"};
            assertArrayEquals(new boolean[] {true, true, true}, filter.insertAll(texts));
            byte[][] encoded = {"a".getBytes(StandardCharsets.UTF_8), "zzz".getBytes(StandardCharsets.UTF_8)};
            assertArrayEquals(new boolean[] {true, false}, filter.containsAll(encoded));
            assertArrayEquals(new boolean[] {true, true, true}, filter.containsAll(texts));
            assertThrows(NullPointerException.class, () -> filter.containsAll(new String[] {"a", null}));
            assertThrows(NullPointerException.class, () -> filter.insertAll(new byte[][] {null}));
            assertEquals(7, filter.size());
        }
    }

    @Test
    void aFullFilterAnswersFalseAndChangesNothing() {
        try (CuckooFilter filter = CuckooFilter.builder().capacity(100).fingerprintBits(8).build()) {
            List<Long> stored = new ArrayList<>();
            long refused = -1;
            for (long i = 0; i < 100_000; i++) {
                if (filter.insert(i)) {
                    stored.add(i);
                } else {
                    refused = i;
                    break;
                }
            }
            assertTrue(refused >= 0, "a filter for 100 items took 100,000");
            assertEquals(stored.size(), filter.size());
            for (long key : stored) {
                assertTrue(filter.contains(key), "key " + key + " lost by the refused insert");
            }
        }
    }

    @Test
    void badConfigurationsAndNullsAreRefused() {
        IllegalArgumentException bits = assertThrows(IllegalArgumentException.class, () -> new CuckooFilter(1_000, 3));
        assertTrue(bits.getMessage().contains("4"), bits.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CuckooFilter.builder().capacity(1_000).bucketSize(3).build());
        assertThrows(IllegalArgumentException.class, () -> CuckooFilter.builder().build());
        assertThrows(IllegalArgumentException.class,
                () -> CuckooFilter.builder().capacity(10).falsePositiveRate(0.01).fingerprintBits(8).build());
        try (CuckooFilter filter = new CuckooFilter(100, 12)) {
            assertThrows(NullPointerException.class, () -> filter.insert((String) null));
            assertThrows(NullPointerException.class, () -> filter.contains((byte[]) null));
            assertThrows(NullPointerException.class, () -> filter.insertAll((long[]) null));
        }
    }

    @Test
    void aClosedFilterThrowsAndClosingTwiceIsHarmless() {
        CuckooFilter filter = new CuckooFilter(100, 12);
        filter.insert("x");
        filter.close();
        filter.close();
        assertThrows(IllegalStateException.class, () -> filter.contains("x"));
        assertThrows(IllegalStateException.class, () -> filter.insert(1L));
        assertThrows(IllegalStateException.class, filter::size);
        assertThrows(IllegalStateException.class, filter::toByteArray);
    }

    @Test
    void bytesAndFilesReadBack(@TempDir Path dir) throws Exception {
        try (CuckooFilter filter = CuckooFilter.builder().capacity(1_000).seed(5).build()) {
            for (long i = 0; i < 500; i++) {
                filter.insert(i);
            }
            try (CuckooFilter copy = CuckooFilter.fromByteArray(filter.toByteArray())) {
                assertEquals(500, copy.size());
                for (long i = 0; i < 500; i++) {
                    assertTrue(copy.contains(i));
                }
            }
            Path file = dir.resolve("f.bugu");
            filter.save(file);
            try (CuckooFilter loaded = CuckooFilter.load(file)) {
                assertArrayEquals(filter.toByteArray(), loaded.toByteArray());
            }
            assertThrows(BuguException.class, () -> CuckooFilter.load(dir.resolve("missing.bugu")));
            assertThrows(BuguException.class, () -> GrowableFilter.load(file));
        }
    }

    @Test
    void everyTruncationAndEveryChangedByteIsRefused() {
        byte[] bytes;
        try (CuckooFilter filter = new CuckooFilter(20, 8)) {
            for (long i = 0; i < 10; i++) {
                filter.insert(i);
            }
            bytes = filter.toByteArray();
        }
        for (int length = 0; length < bytes.length; length++) {
            byte[] cut = java.util.Arrays.copyOf(bytes, length);
            assertThrows(BuguException.class, () -> CuckooFilter.fromByteArray(cut), "truncated to " + length);
        }
        for (int at = 0; at < bytes.length; at++) {
            for (int value = 0; value < 256; value++) {
                if ((byte) value == bytes[at]) {
                    continue;
                }
                byte[] changed = bytes.clone();
                changed[at] = (byte) value;
                int where = at;
                assertThrows(BuguException.class, () -> CuckooFilter.fromByteArray(changed), () -> "byte " + where);
            }
        }
    }

    @Test
    void eightThreadsFindEveryKeyTheyAdded() throws Exception {
        int threads = 8;
        int perThread = 50_000;
        AtomicLong missing = new AtomicLong();
        try (CuckooFilter filter = CuckooFilter.builder().capacity((long) threads * perThread).build()) {
            List<Thread> running = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long base = (long) t * perThread;
                Thread thread = new Thread(() -> {
                    for (long i = base; i < base + perThread; i++) {
                        if (!filter.insert(i)) {
                            missing.incrementAndGet();
                        }
                        if (!filter.contains(i) || !filter.contains(base)) {
                            missing.incrementAndGet();
                        }
                    }
                });
                running.add(thread);
                thread.start();
            }
            for (Thread thread : running) {
                thread.join();
            }
            assertEquals(0, missing.get());
            assertEquals((long) threads * perThread, filter.longSize());
        }
    }

    @Test
    void closingWhileOtherThreadsCallNeverCrashes() throws Exception {
        for (int round = 0; round < 20; round++) {
            CuckooFilter filter = new CuckooFilter(10_000, 12);
            List<Thread> running = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Thread thread = new Thread(() -> {
                    try {
                        for (long i = 0; i < 100_000; i++) {
                            filter.insert(i % 5_000);
                            filter.contains(i);
                        }
                    } catch (IllegalStateException closed) {
                        // The filter was closed under it: the call refused, nothing was touched.
                    }
                });
                running.add(thread);
                thread.start();
            }
            Thread.sleep(2);
            filter.close();
            for (Thread thread : running) {
                thread.join();
            }
        }
    }

    @Test
    void aFileOfTheOtherKindIsRefused(@TempDir Path dir) throws Exception {
        try (GrowableFilter growable = new GrowableFilter(100)) {
            growable.insert("g");
            assertThrows(BuguException.class, () -> CuckooFilter.fromByteArray(growable.toByteArray()));
            Path file = dir.resolve("g.bugu");
            growable.save(file);
            assertTrue(Files.size(file) > 0);
        }
    }
}
