package io.pushd.server.lifecycle;

import java.util.concurrent.atomic.AtomicReference;

/** The server's state with forward-only transitions, readable from any thread. */
public final class Lifecycle {

    private final AtomicReference<ServerState> state = new AtomicReference<>(ServerState.STARTING);

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

    /** True from the drain on: DRAINING and every state after it. */
    public boolean isStopping() {
        return state.get().compareTo(ServerState.DRAINING) >= 0;
    }

    /** True while new upgrades and publishes are taken: READY, and DRAINING (the balancer grace). */
    public boolean isServing() {
        ServerState s = state.get();
        return s == ServerState.READY || s == ServerState.DRAINING;
    }
}
