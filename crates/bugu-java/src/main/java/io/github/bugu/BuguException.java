package io.github.bugu;

import java.io.IOException;

/** Bytes or a file that do not hold a filter of the kind asked for, or a file that could not be read or written. */
public class BuguException extends IOException {
    private static final long serialVersionUID = 1L;

    /** An exception with its message. */
    public BuguException(String message) {
        super(message);
    }
}
