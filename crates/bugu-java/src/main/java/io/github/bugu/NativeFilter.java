package io.github.bugu;

import java.util.Objects;

/**
 * A bugu filter that takes updates: what {@link ReadableFilter} answers, and {@code insert},
 * {@code insertUnique}, {@code delete} and batched inserts, written once for
 * {@link CuckooFilter} and {@link GrowableFilter}.
 */
public abstract class NativeFilter extends ReadableFilter {
    NativeFilter(Created created) {
        super(created);
    }

    /** Adds a key; {@code false} if the filter has no room for it, and then nothing changed. */
    public boolean insert(String key) {
        if (Objects.requireNonNull(key, "key").length() > Native.TEXT) {
            return insert(utf8(key));
        }
        long address = handle.enter();
        try {
            return Native.insertText(address, key, false) == 1;
        } finally {
            handle.leave();
        }
    }

    /** Adds a key; {@code false} if the filter has no room for it, and then nothing changed. */
    public boolean insert(byte[] key) {
        bytes(key);
        long address = handle.enter();
        try {
            return Native.insertBytes(address, key, false) == 1;
        } finally {
            handle.leave();
        }
    }

    /** Adds a key; {@code false} if the filter has no room for it, and then nothing changed. */
    public boolean insert(long key) {
        long address = handle.enter();
        try {
            return Native.insertLong(address, key, false) == 1;
        } finally {
            handle.leave();
        }
    }

    /** Adds a key unless it is (or looks) present: {@code true} if it was stored. */
    public boolean insertUnique(String key) {
        if (Objects.requireNonNull(key, "key").length() > Native.TEXT) {
            return insertUnique(utf8(key));
        }
        long address = handle.enter();
        try {
            return Native.insertText(address, key, true) == 1;
        } finally {
            handle.leave();
        }
    }

    /** Adds a key unless it is (or looks) present: {@code true} if it was stored. */
    public boolean insertUnique(byte[] key) {
        bytes(key);
        long address = handle.enter();
        try {
            return Native.insertBytes(address, key, true) == 1;
        } finally {
            handle.leave();
        }
    }

    /** Adds a key unless it is (or looks) present: {@code true} if it was stored. */
    public boolean insertUnique(long key) {
        long address = handle.enter();
        try {
            return Native.insertLong(address, key, true) == 1;
        } finally {
            handle.leave();
        }
    }

    /** Removes one copy of a key added before; {@code false} if none was found. */
    public boolean delete(String key) {
        if (Objects.requireNonNull(key, "key").length() > Native.TEXT) {
            return delete(utf8(key));
        }
        long address = handle.enter();
        try {
            return Native.deleteText(address, key);
        } finally {
            handle.leave();
        }
    }

    /** Removes one copy of a key added before; {@code false} if none was found. */
    public boolean delete(byte[] key) {
        bytes(key);
        long address = handle.enter();
        try {
            return Native.deleteBytes(address, key);
        } finally {
            handle.leave();
        }
    }

    /** Removes one copy of a key added before; {@code false} if none was found. */
    public boolean delete(long key) {
        long address = handle.enter();
        try {
            return Native.deleteLong(address, key);
        } finally {
            handle.leave();
        }
    }

    /** {@link #insert(long)} for every key, in one native call. */
    public boolean[] insertAll(long[] keys) {
        return longs(keys, true);
    }

    /** {@link #insert(byte[])} for every key, in one native call; a {@code null} key throws before anything changes. */
    public boolean[] insertAll(byte[][] keys) {
        return byteArrays(keys, true);
    }

    /** {@link #insert(String)} for every key, in one native call; a {@code null} key throws before anything changes. */
    public boolean[] insertAll(String[] keys) {
        return byteArrays(encoded(keys), true);
    }
}
