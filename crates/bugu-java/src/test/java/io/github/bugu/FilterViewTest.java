package io.github.bugu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FilterViewTest {
    private static long[] keys(int n) {
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            keys[i] = i * 7919L;
        }
        return keys;
    }

    @Test
    void aViewAnswersAsTheFilterItsFileHolds(@TempDir Path dir) throws Exception {
        long[] probes = keys(20_000);
        try (CuckooFilter fixed = CuckooFilter.builder().capacity(10_000).build();
                GrowableFilter growable = new GrowableFilter(500)) {
            for (NativeFilter filter : new NativeFilter[] {fixed, growable}) {
                filter.insertAll(keys(5_000));
                Path file = dir.resolve(filter.getClass().getSimpleName() + ".bugu");
                filter.save(file);
                try (FilterView view = FilterView.open(file)) {
                    assertArrayEquals(filter.containsAll(probes), view.containsAll(probes));
                    assertEquals(filter.longSize(), view.longSize());
                    assertEquals(filter.count(7919L), view.count(7919L));
                    assertArrayEquals(Files.readAllBytes(file), view.toByteArray());
                    Path copy = dir.resolve("copy.bugu");
                    view.save(copy);
                    try (FilterView again = CuckooFilter.open(copy)) {
                        assertArrayEquals(view.containsAll(probes), again.containsAll(probes));
                    }
                }
            }
        }
    }

    @Test
    void whatIsNotASoundFilterFileIsRefused(@TempDir Path dir) throws Exception {
        Path garbage = dir.resolve("garbage.bugu");
        Files.write(garbage, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
        assertThrows(BuguException.class, () -> FilterView.open(garbage));
        assertThrows(BuguException.class, () -> FilterView.open(dir));
        assertThrows(BuguException.class, () -> FilterView.open(dir.resolve("missing.bugu")));
        Path empty = dir.resolve("empty.bugu");
        Files.write(empty, new byte[0]);
        assertThrows(BuguException.class, () -> FilterView.open(empty));
        assertThrows(NullPointerException.class, () -> FilterView.open(null));
    }

    @Test
    void aClosedViewThrows(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("f.bugu");
        try (CuckooFilter filter = new CuckooFilter(100, 12)) {
            filter.insert("x");
            filter.save(file);
        }
        FilterView view = FilterView.open(file);
        view.close();
        assertThrows(IllegalStateException.class, () -> view.contains("x"));
    }
}
