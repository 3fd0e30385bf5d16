package io.pushd.client;

/**
 * How a {@link PushClient} reaches the server. Both carry the same frames and give the same
 * promises (resume per topic, each event once and in order, the server's retry hints honoured);
 * server-sent events are for paths where a WebSocket does not get through (some proxies) and to
 * measure what browsers on {@code EventSource} do.
 */
public enum Transport {
    /** {@code GET /v1/live}, upgraded to a WebSocket. */
    WEBSOCKET("ws", PushClientOptions.PATH),
    /** {@code GET /v1/sse}, a streamed {@code text/event-stream} response. */
    SSE("http", PushClientOptions.SSE_PATH);

    private final String scheme;
    private final String path;

    Transport(String scheme, String path) {
        this.scheme = scheme;
        this.path = path;
    }

    String scheme() {
        return scheme;
    }

    String path() {
        return path;
    }

    /** {@code websocket} or {@code sse}, as a command line or a report writes it. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
