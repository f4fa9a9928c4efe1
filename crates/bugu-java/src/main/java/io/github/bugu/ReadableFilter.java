package io.github.bugu;

import java.lang.ref.Cleaner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Objects;

/**
 * What every bugu filter in Java answers, written once: keys as {@code String} (its UTF-8 bytes),
 * {@code byte[]} (its bytes) or {@code long} (an {@code int} widens to it; hashed as 8 bytes
 * little-endian), as in every front end of bugu; batches that cross into native code once; the
 * filter's bytes and file; and {@link #close}, after which every call throws
 * {@link IllegalStateException}. {@link NativeFilter} adds the updates.
 */
public abstract class ReadableFilter implements AutoCloseable {
    final NativeHandle handle;
    private final Cleaner.Cleanable cleanable;

    /** A native filter just made, for a subclass to take over. */
    record Created(long address) {}

    ReadableFilter(Created created) {
        this.handle = new NativeHandle(created.address());
        // The action holds the handle, never this object, so the object can become unreachable.
        this.cleanable = NativeHandle.CLEANER.register(this, handle);
    }

    static byte[] utf8(String key) {
        return Objects.requireNonNull(key, "key").getBytes(StandardCharsets.UTF_8);
    }

    static byte[] bytes(byte[] key) {
        return Objects.requireNonNull(key, "key");
    }

    /** Whether the key may have been added: never {@code false} for a key added and not deleted. */
    public boolean contains(String key) {
        if (Objects.requireNonNull(key, "key").length() > Native.TEXT) {
            return contains(utf8(key));
        }
        long address = handle.enter();
        try {
            return Native.containsText(address, key);
        } finally {
            handle.leave();
        }
    }

    /** Whether the key may have been added: never {@code false} for a key added and not deleted. */
    public boolean contains(byte[] key) {
        bytes(key);
        long address = handle.enter();
        try {
            return Native.containsBytes(address, key);
        } finally {
            handle.leave();
        }
    }

    /** Whether the key may have been added: never {@code false} for a key added and not deleted. */
    public boolean contains(long key) {
        long address = handle.enter();
        try {
            return Native.containsLong(address, key);
        } finally {
            handle.leave();
        }
    }

    /** The copies of the key the filter holds (an upper bound: look-alikes count too). */
    public int count(String key) {
        if (Objects.requireNonNull(key, "key").length() > Native.TEXT) {
            return count(utf8(key));
        }
        long address = handle.enter();
        try {
            return Native.countText(address, key);
        } finally {
            handle.leave();
        }
    }

    /** The copies of the key the filter holds (an upper bound: look-alikes count too). */
    public int count(byte[] key) {
        bytes(key);
        long address = handle.enter();
        try {
            return Native.countBytes(address, key);
        } finally {
            handle.leave();
        }
    }

    /** The copies of the key the filter holds (an upper bound: look-alikes count too). */
    public int count(long key) {
        long address = handle.enter();
        try {
            return Native.countLong(address, key);
        } finally {
            handle.leave();
        }
    }

    /** The items held, as a {@code long}. */
    public long longSize() {
        long address = handle.enter();
        try {
            return Native.size(address);
        } finally {
            handle.leave();
        }
    }

    /** The items held ({@link Integer#MAX_VALUE} past it: see {@link #longSize}). */
    public int size() {
        return (int) Math.min(Integer.MAX_VALUE, longSize());
    }

    /** {@link #contains(long)} for every key, in one native call. */
    public boolean[] containsAll(long[] keys) {
        return longs(keys, false);
    }

    /** {@link #contains(byte[])} for every key, in one native call. */
    public boolean[] containsAll(byte[][] keys) {
        return byteArrays(keys, false);
    }

    /** {@link #contains(String)} for every key, in one native call. */
    public boolean[] containsAll(String[] keys) {
        return byteArrays(encoded(keys), false);
    }

    static byte[][] encoded(String[] keys) {
        Objects.requireNonNull(keys, "keys");
        byte[][] all = new byte[keys.length][];
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] == null) {
                throw new NullPointerException("keys[" + i + "]");
            }
            all[i] = utf8(keys[i]);
        }
        return all;
    }

    boolean[] longs(long[] keys, boolean insert) {
        Objects.requireNonNull(keys, "keys");
        long address = handle.enter();
        try {
            return Native.longs(address, keys, insert);
        } finally {
            handle.leave();
        }
    }

    /** The keys flattened into one array, with each key's end, so the batch crosses in two copies. */
    boolean[] byteArrays(byte[][] keys, boolean insert) {
        Objects.requireNonNull(keys, "keys");
        int[] ends = new int[keys.length];
        long total = 0;
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] == null) {
                throw new NullPointerException("keys[" + i + "]");
            }
            total += keys[i].length;
            if (total > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("a batch of more than 2 GiB of keys: split it");
            }
            ends[i] = (int) total;
        }
        byte[] data = new byte[(int) total];
        for (int i = 0, at = 0; i < keys.length; at = ends[i], i++) {
            System.arraycopy(keys[i], 0, data, at, keys[i].length);
        }
        long address = handle.enter();
        try {
            return Native.flat(address, data, ends, insert);
        } finally {
            handle.leave();
        }
    }

    /** The filter in bugu's file format, which every front end of bugu reads. */
    public byte[] toByteArray() {
        long address = handle.enter();
        try {
            return Native.toBytes(address);
        } finally {
            handle.leave();
        }
    }

    /** Writes the filter to a file atomically: a reader sees the old file or the new one, whole. */
    public void save(Path path) throws BuguException {
        Objects.requireNonNull(path, "path");
        long address = handle.enter();
        try {
            Native.save(address, path.toString());
        } finally {
            handle.leave();
        }
    }

    /** Frees the filter's memory; every call after this throws {@link IllegalStateException}. */
    @Override
    public void close() {
        cleanable.clean();
    }
}
