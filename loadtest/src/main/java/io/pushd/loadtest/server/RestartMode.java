package io.pushd.loadtest.server;

/** How the server is taken down for a restart. */
public enum RestartMode {
    /** SIGTERM: the server drains, closing every WebSocket with 1012 and a jittered {@code retryMs}. */
    GRACEFUL,
    /** SIGKILL: no close frame, no hint; only the clients' own jitter spreads them. */
    CRASH;

    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
