package io.github.bugu;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A cuckoo filter that grows as items are added, keeping its false-positive rate under the
 * target at every size (a chain of tables, each larger and with longer fingerprints). Calls are
 * safe from any thread; they run one at a time.
 */
public final class GrowableFilter extends NativeFilter {
    private GrowableFilter(Created created) {
        super(created);
    }

    /** A filter that starts with room for {@code initialCapacity} items, at a rate of 0.001. */
    public GrowableFilter(long initialCapacity) {
        this(initialCapacity, 0.001);
    }

    /** A filter that starts with room for {@code initialCapacity} items and stays under {@code falsePositiveRate}. */
    public GrowableFilter(long initialCapacity, double falsePositiveRate) {
        super(new Created(Native.newGrowable(initialCapacity, falsePositiveRate, 0)));
    }

    /** A filter from bytes {@link #toByteArray} gave (or any bugu front end saved for a filter that grows). */
    public static GrowableFilter fromByteArray(byte[] bytes) throws BuguException {
        return new GrowableFilter(new Created(Native.fromBytes(Objects.requireNonNull(bytes, "bytes"), true)));
    }

    /** The file at {@code path} opened read-only and memory-mapped (see {@link FilterView}). */
    public static FilterView open(Path path) throws BuguException {
        return FilterView.open(path);
    }

    /** A filter from a file {@link #save} wrote (or any bugu front end saved for a filter that grows). */
    public static GrowableFilter load(Path path) throws BuguException {
        return new GrowableFilter(new Created(Native.load(Objects.requireNonNull(path, "path").toString(), true)));
    }
}
