package io.github.bugu;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A native filter's address and who is using it: calls enter and leave around each native call,
 * and {@link #close} frees the filter once, after the calls running when it was closed have left;
 * a call that enters after {@code close} throws {@link IllegalStateException}, so no call ever
 * reaches freed memory. It is also the {@link Cleaner}'s action, run when its filter object is
 * unreachable (and so no call can be running).
 */
final class NativeHandle implements Runnable {
    private static final Cleaner CLEANER = Cleaner.create();
    private static final int CLOSED = Integer.MIN_VALUE;

    private final long address;
    /** The calls inside, with {@link #CLOSED} set once closed. */
    private final AtomicInteger state = new AtomicInteger();

    private NativeHandle(long address) {
        this.address = address;
    }

    /** A handle for a new native filter, freed by the Cleaner when {@code owner} is unreachable. */
    static Cleaner.Cleanable register(Object owner, long address, NativeHandle[] out) {
        NativeHandle handle = new NativeHandle(address);
        out[0] = handle;
        return CLEANER.register(owner, handle);
    }

    /** Enters a call: the address to pass, valid until {@link #leave}. */
    long enter() {
        while (true) {
            int now = state.get();
            if (now < 0) {
                throw new IllegalStateException("the filter is closed");
            }
            if (state.compareAndSet(now, now + 1)) {
                return address;
            }
        }
    }

    void leave() {
        state.decrementAndGet();
    }

    /** Closes: no call enters from now on; frees the filter when the calls inside have left. */
    @Override
    public void run() {
        int before = state.getAndUpdate(now -> now | CLOSED);
        if (before < 0) {
            return;
        }
        while ((state.get() & ~CLOSED) != 0) {
            Thread.onSpinWait();
        }
        Native.free(address);
    }
}
