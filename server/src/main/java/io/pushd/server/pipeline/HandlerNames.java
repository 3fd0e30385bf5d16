package io.pushd.server.pipeline;

/**
 * Names of the handlers {@link PushServerInitializer} installs, in pipeline order (head → tail):
 *
 * <pre>
 *   connection-limit      ConnectionLimitFilter       TCP caps in all and per address, at accept (then leaves)
 *   backpressure          BackpressureHandler         owns autoRead: paused while unwritable or requests wait
 *   flush-consolidation   FlushConsolidationHandler   batches flushes made while reading
 *   http-codec            HttpServerCodec             (replaced by the WebSocket codec on upgrade)
 *   http-keepalive        HttpServerKeepAliveHandler
 *   http-aggregator       JsonHttpObjectAggregator    bounded bodies, JSON 413
 *   http-request-timeout  RequestTimeoutHandler       slowloris, idle, age and unread-answer bounds of HTTP
 *   http-api              HttpApiHandler              REST API, health, upgrade validation
 *   ws-compression        WebSocketServerCompressionHandler  permessage-deflate, only when enabled
 *   ws-heartbeat          HeartbeatHandler            pings, closes a silent peer (sees pongs)
 *   ws-close              CloseHandshakeHandler       the peer's close frames; discards input once closing
 *   ws-inbound-rate       InboundRateHandler          every frame counts against the inbound limit (1008)
 *   ws-protocol           LiveProtocolHandler         handshake, ping/pong, frame limits (Netty's, errors passed on)
 *   ws-aggregator         WebSocketFrameAggregator    joins fragmented messages, bounded
 *   ws-session            LiveSessionHandler          subscriptions, replay, live events
 * </pre>
 *
 * <p>{@code http-keepalive}, {@code http-request-timeout} and {@code http-api} leave the pipeline
 * when the connection upgrades.
 */
public final class HandlerNames {
    public static final String CONNECTION_LIMIT = "connection-limit";
    public static final String BACKPRESSURE = "backpressure";
    public static final String FLUSH_CONSOLIDATION = "flush-consolidation";
    public static final String HTTP_CODEC = "http-codec";
    public static final String HTTP_KEEPALIVE = "http-keepalive";
    public static final String HTTP_AGGREGATOR = "http-aggregator";
    public static final String HTTP_REQUEST_TIMEOUT = "http-request-timeout";
    public static final String HTTP_API = "http-api";
    public static final String WS_COMPRESSION = "ws-compression";
    public static final String WS_HEARTBEAT = "ws-heartbeat";
    public static final String WS_CLOSE = "ws-close";
    public static final String WS_INBOUND_RATE = "ws-inbound-rate";
    public static final String WS_PROTOCOL = "ws-protocol";
    public static final String WS_AGGREGATOR = "ws-aggregator";
    public static final String WS_SESSION = "ws-session";

    /** On the listening channel, after Netty's acceptor. */
    public static final String ACCEPT_ERRORS = "accept-errors";

    private HandlerNames() {
    }
}
