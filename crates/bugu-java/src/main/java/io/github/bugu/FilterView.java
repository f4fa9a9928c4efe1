package io.github.bugu;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A bugu filter file of any kind opened read-only and memory-mapped: a fixed-size filter and a
 * filter in one table are queried in place (only the pages a lookup touches are read), a chain
 * of tables is read into memory. It answers what every filter answers; it takes no updates.
 *
 * <pre>{@code
 * try (FilterView view = FilterView.open(Path.of("users.bugu"))) {
 *     view.contains("alice");
 * }
 * }</pre>
 */
public final class FilterView extends ReadableFilter {
    private FilterView(Created created) {
        super(created);
    }

    /** Opens a filter file read-only; {@link BuguException} if it is not a sound filter file. */
    public static FilterView open(Path path) throws BuguException {
        return new FilterView(new Created(Native.open(Objects.requireNonNull(path, "path").toString())));
    }
}
