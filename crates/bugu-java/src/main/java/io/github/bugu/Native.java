package io.github.bugu;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The native library and its methods. It is loaded from {@code java.library.path} when that holds
 * {@code libbugu_java.so}, else from the copy inside the jar (extracted to a temporary file).
 */
final class Native {
    private static final String LIBRARY = "bugu_java";
    private static final String IN_JAR = "/native/linux-x86_64/libbugu_java.so";

    static {
        load();
    }

    /** The longest {@code String} passed to native code as it is (its UTF-8 then fits the native side's stack buffer). */
    static final int TEXT = 85;

    private Native() {}

    private static void load() {
        try {
            System.loadLibrary(LIBRARY);
            return;
        } catch (UnsatisfiedLinkError notOnPath) {
            // Not on java.library.path: the jar's copy.
        }
        try (InputStream in = Native.class.getResourceAsStream(IN_JAR)) {
            if (in == null) {
                throw new UnsatisfiedLinkError(
                        "bugu: no " + System.mapLibraryName(LIBRARY) + " on java.library.path and none in the jar at "
                                + IN_JAR + " (built for linux-x86_64 only)");
            }
            Path file = Files.createTempFile("libbugu_java", ".so");
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            System.load(file.toAbsolutePath().toString());
        } catch (IOException e) {
            throw new UnsatisfiedLinkError("bugu: could not extract the native library: " + e);
        }
    }

    static native long newCuckoo(long capacity, double fpr, int bits, int bucketSize, long seed);

    static native long newGrowable(long initialCapacity, double fpr, long seed);

    static native void free(long handle);

    /** 1 stored, 0 not stored (already present, add-if-absent), -1 no room (nothing changed). */
    static native int insertBytes(long handle, byte[] key, boolean unique);

    static native int insertLong(long handle, long key, boolean unique);

    /** A {@code String} of at most {@link #TEXT} chars, encoded to UTF-8 in native code; longer ones go as bytes. */
    static native int insertText(long handle, String key, boolean unique);

    static native boolean containsText(long handle, String key);

    static native boolean deleteText(long handle, String key);

    static native int countText(long handle, String key);

    static native boolean containsBytes(long handle, byte[] key);

    static native boolean containsLong(long handle, long key);

    static native boolean deleteBytes(long handle, byte[] key);

    static native boolean deleteLong(long handle, long key);

    static native int countBytes(long handle, byte[] key);

    static native int countLong(long handle, long key);

    static native long size(long handle);

    static native boolean[] longs(long handle, long[] keys, boolean insert);

    /** Key {@code i} is {@code data[ends[i - 1]..ends[i]]} (from 0 for the first). */
    static native boolean[] flat(long handle, byte[] data, int[] ends, boolean insert);

    static native byte[] toBytes(long handle);

    static native void save(long handle, String path) throws BuguException;

    static native long fromBytes(byte[] bytes, boolean growable) throws BuguException;

    static native long load(String path, boolean growable) throws BuguException;

    static native long open(String path) throws BuguException;
}
