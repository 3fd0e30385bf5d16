package io.pushd.server.lifecycle;

import java.util.concurrent.atomic.AtomicReference;

/** The server's state with forward-only transitions, readable from any thread. */
public final class Lifecycle {

    private final AtomicReference<ServerState> state = new AtomicReference<>(ServerState.STARTING);
    private volatile boolean refusingNewWork;

    public ServerState state() {
        return state.get();
    }

    /** Moves to {@code next} if that is forward; returns false when already there or past it. */
    public boolean advanceTo(ServerState next) {
        while (true) {
            ServerState current = state.get();
            if (current.compareTo(next) >= 0) {
                return false;
            }
            if (state.compareAndSet(current, next)) {
                return true;
            }
        }
    }

    /** True while {@code /readyz} should answer 200. */
    public boolean isReady() {
        return state.get() == ServerState.READY;
    }

    /**
     * True while new upgrades and publishes are taken: in READY, and in DRAINING until the
     * balancer grace has passed.
     */
    public boolean isAcceptingWork() {
        ServerState s = state.get();
        return s == ServerState.READY || (s == ServerState.DRAINING && !refusingNewWork);
    }

    /** End of the balancer grace during a drain. */
    public void refuseNewWork() {
        refusingNewWork = true;
    }
}
