package io.pushd.client;

/** Lifecycle of a {@link PushClient}. Moves forward through the cycle and never leaves {@link #CLOSED}. */
public enum ClientState {
    /** Created, {@link PushClient#start()} not called yet. */
    NEW,
    /** A TCP connect or the WebSocket handshake (SSE: the request) is in progress. */
    CONNECTING,
    /** The WebSocket (or SSE stream) is open. */
    CONNECTED,
    /** Disconnected; the next attempt is scheduled. */
    WAITING,
    /**
     * {@link PushClient#close()} was called, or the server refused the client's credentials (401/403)
     * and no new token came from the supplier: no more attempts.
     */
    CLOSED
}
