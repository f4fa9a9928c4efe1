package io.github.bugu.bench;

import java.nio.charset.StandardCharsets;

/**
 * A cuckoo filter written in plain Java for the benchmark, in the shape Java users copy into
 * their programs: {@code new JavaCuckooFilter(capacity, fingerprintBits)} with insert, contains,
 * delete and size; fingerprints of 4 to 16 bits, buckets of 4, at most 500 kicks; a table whose
 * bucket count is a power of two. Not part of the library.
 */
final class JavaCuckooFilter {
    private static final int SLOTS = 4;
    private static final int MAX_KICKS = 500;

    private final short[] table;
    private final int bucketMask;
    private final int fingerprintMask;
    private int size;
    private long random = 0x9E3779B97F4A7C15L;

    JavaCuckooFilter(int capacity, int fingerprintBits) {
        if (fingerprintBits < 4 || fingerprintBits > 16) {
            throw new IllegalArgumentException("fingerprint bits 4..16");
        }
        long buckets = Long.highestOneBit(Math.max(2, (long) Math.ceil(capacity / (SLOTS * 0.95))) * 2 - 1);
        this.table = new short[(int) buckets * SLOTS];
        this.bucketMask = (int) buckets - 1;
        this.fingerprintMask = (1 << fingerprintBits) - 1;
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static long hash(String key) {
        long h = 0xCBF29CE484222325L;
        for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001B3L;
        }
        return mix(h);
    }

    private int fingerprint(long hash) {
        int fp = (int) (hash >>> 32) & fingerprintMask;
        return fp == 0 ? 1 : fp;
    }

    private int alternate(int bucket, int fp) {
        return (bucket ^ (fp * 0x5bd1e995)) & bucketMask;
    }

    boolean insert(long hash) {
        int fp = fingerprint(hash);
        int first = (int) hash & bucketMask;
        int second = alternate(first, fp);
        if (put(first, fp) || put(second, fp)) {
            size++;
            return true;
        }
        int bucket = (random() & 1) == 0 ? first : second;
        for (int kick = 0; kick < MAX_KICKS; kick++) {
            int slot = bucket * SLOTS + (random() & (SLOTS - 1));
            int victim = table[slot] & 0xffff;
            table[slot] = (short) fp;
            fp = victim;
            bucket = alternate(bucket, fp);
            if (put(bucket, fp)) {
                size++;
                return true;
            }
        }
        // The copy's way: the fingerprint carried last is dropped (an item is lost).
        return false;
    }

    boolean contains(long hash) {
        int fp = fingerprint(hash);
        int first = (int) hash & bucketMask;
        return has(first, fp) || has(alternate(first, fp), fp);
    }

    boolean delete(long hash) {
        int fp = fingerprint(hash);
        int first = (int) hash & bucketMask;
        if (remove(first, fp) || remove(alternate(first, fp), fp)) {
            size--;
            return true;
        }
        return false;
    }

    int size() {
        return size;
    }

    long bytes() {
        return (long) table.length * Short.BYTES;
    }

    private int random() {
        random ^= random << 13;
        random ^= random >>> 7;
        random ^= random << 17;
        return (int) random;
    }

    private boolean put(int bucket, int fp) {
        for (int i = bucket * SLOTS; i < bucket * SLOTS + SLOTS; i++) {
            if (table[i] == 0) {
                table[i] = (short) fp;
                return true;
            }
        }
        return false;
    }

    private boolean has(int bucket, int fp) {
        for (int i = bucket * SLOTS; i < bucket * SLOTS + SLOTS; i++) {
            if ((table[i] & 0xffff) == fp) {
                return true;
            }
        }
        return false;
    }

    private boolean remove(int bucket, int fp) {
        for (int i = bucket * SLOTS; i < bucket * SLOTS + SLOTS; i++) {
            if ((table[i] & 0xffff) == fp) {
                table[i] = 0;
                return true;
            }
        }
        return false;
    }
}
