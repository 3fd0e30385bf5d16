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
    /** {@link PushClient#close()} was called: no more attempts. */
    CLOSED
}
