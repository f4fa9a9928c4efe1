package io.github.bugu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class GrowableFilterTest {
    @Test
    void growsPastItsInitialCapacityWithoutLosingAKey() throws Exception {
        try (GrowableFilter filter = new GrowableFilter(1_000, 0.001)) {
            for (long i = 0; i < 200_000; i++) {
                assertTrue(filter.insert(i));
            }
            assertEquals(200_000, filter.size());
            for (long i = 0; i < 200_000; i++) {
                assertTrue(filter.contains(i), "key " + i);
            }
            int falsePositives = 0;
            for (long i = 200_000; i < 400_000; i++) {
                falsePositives += filter.contains(i) ? 1 : 0;
            }
            assertTrue(falsePositives <= 200, falsePositives + " false positives in 200,000");
            try (GrowableFilter copy = GrowableFilter.fromByteArray(filter.toByteArray())) {
                assertEquals(200_000, copy.size());
                assertTrue(copy.contains(199_999L));
            }
        }
    }

    @Test
    void insertUniqueSkipsWhatIsPresent() {
        try (GrowableFilter filter = new GrowableFilter(100)) {
            assertTrue(filter.insertUnique("once"));
            assertFalse(filter.insertUnique("once"));
            assertEquals(1, filter.count("once"));
            assertTrue(filter.delete("once"));
            assertFalse(filter.delete("once"));
        }
    }

    @Test
    void aFixedFilesBytesAreRefused() {
        try (CuckooFilter fixed = new CuckooFilter(100, 12)) {
            BuguException refused = assertThrows(BuguException.class, () -> GrowableFilter.fromByteArray(fixed.toByteArray()));
            assertTrue(refused.getMessage().contains("CuckooFilter"), refused.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> new GrowableFilter(100, 2.0));
    }
}
