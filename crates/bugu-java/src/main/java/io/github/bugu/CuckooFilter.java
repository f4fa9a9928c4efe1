package io.github.bugu;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A cuckoo filter of fixed size that any number of threads use at once: {@code insert},
 * {@code contains} and {@code delete} in constant time, a tunable false-positive rate and never a
 * false negative.
 *
 * <pre>{@code
 * try (CuckooFilter filter = new CuckooFilter(1_000_000, 12)) {
 *     filter.insert("alice");
 *     filter.contains("alice");   // true
 *     filter.delete("alice");
 * }
 * }</pre>
 */
public final class CuckooFilter extends NativeFilter {
    private CuckooFilter(Created created) {
        super(created);
    }

    /** A filter for {@code capacity} items with {@code fingerprintBits}-bit fingerprints (4 to 32) in buckets of 4. */
    public CuckooFilter(int capacity, int fingerprintBits) {
        super(new Created(Native.newCuckoo(capacity, 0.0, fingerprintBits, 4, 0)));
    }

    /** A builder: capacity, false-positive rate or fingerprint bits, bucket size, seed. */
    public static Builder builder() {
        return new Builder();
    }

    /** A filter from bytes {@link #toByteArray} gave (or any bugu front end saved for a fixed-size filter). */
    public static CuckooFilter fromByteArray(byte[] bytes) throws BuguException {
        return new CuckooFilter(new Created(Native.fromBytes(Objects.requireNonNull(bytes, "bytes"), false)));
    }

    /** The file at {@code path} opened read-only and memory-mapped (see {@link FilterView}). */
    public static FilterView open(Path path) throws BuguException {
        return FilterView.open(path);
    }

    /** A filter from a file {@link #save} wrote (or any bugu front end saved for a fixed-size filter). */
    public static CuckooFilter load(Path path) throws BuguException {
        return new CuckooFilter(new Created(Native.load(Objects.requireNonNull(path, "path").toString(), false)));
    }

    /** How a {@link CuckooFilter} is made. */
    public static final class Builder {
        private long capacity = -1;
        private double falsePositiveRate;
        private int fingerprintBits;
        private int bucketSize = 4;
        private long seed;

        private Builder() {}

        /** Items the filter must hold (required). */
        public Builder capacity(long items) {
            this.capacity = items;
            return this;
        }

        /** The false-positive rate to stay under (0.001 by default); or set {@link #fingerprintBits}. */
        public Builder falsePositiveRate(double rate) {
            this.falsePositiveRate = rate;
            return this;
        }

        /** Fingerprint bits, 4 to 32, instead of a rate. */
        public Builder fingerprintBits(int bits) {
            this.fingerprintBits = bits;
            return this;
        }

        /** Slots per bucket: 2, 4 (the default) or 8. */
        public Builder bucketSize(int slots) {
            this.bucketSize = slots;
            return this;
        }

        /** The hash seed (0 by default); filters that are compared or merged need the same one. */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** The filter; {@link IllegalArgumentException} for a configuration that cannot be built. */
        public CuckooFilter build() {
            if (capacity < 0) {
                throw new IllegalArgumentException("set the capacity: builder().capacity(1_000_000)");
            }
            return new CuckooFilter(new Created(Native.newCuckoo(capacity, falsePositiveRate, fingerprintBits, bucketSize, seed)));
        }
    }
}
