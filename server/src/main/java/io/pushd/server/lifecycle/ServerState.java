package io.pushd.server.lifecycle;

/** The server's life, in order; a state never goes back to an earlier one. */
public enum ServerState {
    /** Recovering the store; nothing is served yet. */
    STARTING,
    /** Accepting subscribers and publishes; {@code /readyz} answers 200. */
    READY,
    /**
     * Stopping, still serving: {@code /readyz} is 503 so the balancer takes the instance out, but
     * for {@code drain.lbGrace} publishes and upgrades that still arrive are served.
     */
    DRAINING,
    /** Stopping, refusing new work (503, or 1012 for an upgrade); open sessions are being closed. */
    CLOSING,
    /** Closed. */
    STOPPED;

    /**
     * The name {@code /readyz} reports. CLOSING reports "draining": to a balancer both are one
     * phase, and that is the answer it always got.
     */
    public String readinessName() {
        return this == CLOSING ? "draining" : name().toLowerCase(java.util.Locale.ROOT);
    }
}
