package io.pushd.server.pipeline;

/**
 * Names of the handlers {@link PushServerInitializer} installs, in pipeline order (head → tail):
 *
 * <pre>
 *   flush-consolidation   FlushConsolidationHandler   batches flushes of fan-out and replay
 *   http-codec            HttpServerCodec             (replaced by the WebSocket codec on upgrade)
 *   http-keepalive        HttpServerKeepAliveHandler
 *   http-aggregator       JsonHttpObjectAggregator    bounded bodies, JSON 413
 *   http-api              HttpApiHandler              REST API, health, upgrade validation
 *   ws-protocol           WebSocketServerProtocolHandler  handshake, ping/pong, close, frame limits
 *   ws-aggregator         WebSocketFrameAggregator    joins fragmented messages, bounded
 *   ws-session            LiveSessionHandler          subscriptions, replay, live events
 * </pre>
 */
public final class HandlerNames {
    public static final String FLUSH_CONSOLIDATION = "flush-consolidation";
    public static final String HTTP_CODEC = "http-codec";
    public static final String HTTP_KEEPALIVE = "http-keepalive";
    public static final String HTTP_AGGREGATOR = "http-aggregator";
    public static final String HTTP_API = "http-api";
    public static final String WS_PROTOCOL = "ws-protocol";
    public static final String WS_AGGREGATOR = "ws-aggregator";
    public static final String WS_SESSION = "ws-session";

    private HandlerNames() {
    }
}
