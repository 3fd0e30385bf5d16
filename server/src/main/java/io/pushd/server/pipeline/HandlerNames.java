package io.pushd.server.pipeline;

/**
 * Names of the handlers {@link PushServerInitializer} installs, in pipeline order (head → tail).
 *
 * <p>Every connection starts as HTTP ({@code initChannel}):
 * <pre>
 *   tls                   SslHandler                  only with tls.certFile/keyFile; stays for the connection's life
 *   connection-limit      ConnectionLimitFilter       TCP caps in all and per address, at accept (then leaves)
 *   backpressure          BackpressureHandler         owns autoRead: paused while unwritable or requests wait
 *   flush-consolidation   FlushConsolidationHandler   batches flushes made while reading
 *   http-codec            HttpServerCodec
 *   http-keepalive        HttpServerKeepAliveHandler
 *   http-aggregator       JsonHttpObjectAggregator    bounded bodies, JSON 413
 *   http-request-timeout  RequestTimeoutHandler       slowloris, idle, age and unread-answer bounds of HTTP
 *   http-cors             CorsHandler (Netty's)       preflights; Allow-Origin from security.allowedOrigins
 *   http-api              HttpApiHandler              request checks, routes, in-order answers, the /v1/live gate
 * </pre>
 *
 * <p>A {@code /v1/live} request that passes the gate turns it into a WebSocket
 * ({@code upgradeToWebSocket}: the {@code http-*} handlers after the codec leave, the {@code ws-*}
 * ones come in). Netty's handshake then swaps {@code http-codec} for its frame codec and drops
 * {@code http-aggregator}; {@code ws-compression} negotiates permessage-deflate, installs Netty's
 * deflate codec and leaves. After the upgrade ({@code PushServerInitializerTest} checks it):
 * <pre>
 *   backpressure          BackpressureHandler
 *   flush-consolidation   FlushConsolidationHandler
 *   wsencoder, wsdecoder  Netty's frame codec (the decoder becomes ws-discard after a broken frame)
 *   (PerMessageDeflateEncoder/Decoder, when negotiated)
 *   ws-heartbeat          HeartbeatHandler            pings, closes a silent peer (sees pongs)
 *   ws-inbound            InboundFrameHandler         the peer's close frames; discards input once closing;
 *                                                     every other frame counts against the inbound limit (1008)
 *   (Utf8FrameValidator, added by ws-protocol)
 *   ws-protocol           LiveProtocolHandler         handshake, ping/pong, frame limits (Netty's, errors passed on)
 *   ws-aggregator         WebSocketFrameAggregator    joins fragmented messages, bounded
 *   ws-session            LiveSessionHandler          frames to the Session, which writes through a WebSocketSink
 * </pre>
 * Events on a connection without permessage-deflate are whole frames, written by the
 * {@code WebSocketSink} from {@code wsencoder}'s context, so they skip every handler above it.
 *
 * <p>A {@code /v1/sse} request that passes its route becomes a server-sent-events stream
 * ({@code upgradeToSse}: the {@code 200 text/event-stream} head goes out, every {@code http-*}
 * handler but the codec leaves). After the switch:
 * <pre>
 *   backpressure          BackpressureHandler
 *   flush-consolidation   FlushConsolidationHandler
 *   http-codec            HttpServerCodec             chunked encoding of the stream; its decoder only sees stray input
 *   sse-session           SseSessionHandler           retry:, admission, pings; the Session writes through an SseSink
 * </pre>
 * Events of a single-topic stream on a chunked (HTTP/1.1) response come as whole chunks
 * ({@code SseEventFormat.CHUNKED}, shared by every subscriber) and are written by the
 * {@code SseSink} from {@code http-codec}'s context, below it; its messages ({@code retry:},
 * {@code subscribed}, pings, the close) and every event of a multi-topic or HTTP/1.0 stream go
 * through the codec. Both are written on the event loop, in order.
 */
public final class HandlerNames {
    public static final String TLS = "tls";
    public static final String CONNECTION_LIMIT = "connection-limit";
    public static final String BACKPRESSURE = "backpressure";
    public static final String FLUSH_CONSOLIDATION = "flush-consolidation";
    public static final String HTTP_CODEC = "http-codec";
    public static final String HTTP_KEEPALIVE = "http-keepalive";
    public static final String HTTP_AGGREGATOR = "http-aggregator";
    public static final String HTTP_REQUEST_TIMEOUT = "http-request-timeout";
    public static final String HTTP_CORS = "http-cors";
    public static final String HTTP_API = "http-api";
    public static final String SSE_SESSION = "sse-session";
    /** Only while the handshake runs, and only with {@code limits.permessageDeflate}. */
    public static final String WS_COMPRESSION = "ws-compression";
    public static final String WS_HEARTBEAT = "ws-heartbeat";
    public static final String WS_INBOUND = "ws-inbound";
    public static final String WS_PROTOCOL = "ws-protocol";
    public static final String WS_AGGREGATOR = "ws-aggregator";
    public static final String WS_SESSION = "ws-session";
    public static final String WS_DISCARD = "ws-discard";

    /** On the listening channel, after Netty's acceptor. */
    public static final String ACCEPT_ERRORS = "accept-errors";

    private HandlerNames() {
    }
}
