package io.pushd.server.lifecycle;

/** The server's life, in order; a state never goes back to an earlier one. */
public enum ServerState {
    /** Recovering the store; nothing is served yet. */
    STARTING,
    /** Accepting subscribers and publishes; {@code /readyz} answers 200. */
    READY,
    /** Stopping: {@code /readyz} is 503, and after the balancer grace new work is refused. */
    DRAINING,
    /** Closed. */
    STOPPED
}
