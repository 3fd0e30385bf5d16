package io.pushd.server.pipeline;

import io.pushd.server.config.Limits;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.cors.CorsConfig;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionDecoder;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.extensions.compression.WebSocketServerCompressionHandler;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.ReferenceCountUtil;
import io.pushd.protocol.ClientMessage;
import io.pushd.server.admission.ConnectionLimiter;
import io.pushd.server.auth.Grant;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.tls.ReloadingSslContext;
import io.netty.handler.ssl.SslHandler;
import io.pushd.server.sse.SseSessionHandler;
import java.util.List;

/**
 * Builds every connection's pipeline, top to bottom, and makes every change to it: the HTTP
 * pipeline at accept ({@link #initChannel}), the WebSocket one on upgrade
 * ({@link #upgradeToWebSocket}), the SSE one ({@link #upgradeToSse}), and the input discarder after a broken frame
 * ({@link #discardWebSocketInput}). See {@link HandlerNames} for the pictures.
 */
public final class PushServerInitializer extends ChannelInitializer<SocketChannel> {

    /**
     * The request line: a subscription's query names every topic with its last ID (about 260
     * bytes a topic at the longest names), so 64 KiB take some 240 topics. Longer: 414.
     */
    static final int MAX_INITIAL_LINE = 64 * 1024;
    /** All headers: an SSE resume sends its cursor as Last-Event-ID, up to 64 KiB. Larger: 431. */
    static final int MAX_HEADER_SIZE = 80 * 1024;
    /** What the inflater may hold beyond limits.maxFrameBytes while it works (see initWebSocket). */
    private static final int INFLATE_SLACK = 8192;
    /** Requests the codec keeps count of before their answers: what the handler queues, and then some. */
    private static final int MAX_PIPELINE_DEPTH = 4 * HttpApiHandler.MAX_QUEUED_REQUESTS;
    /**
     * Flushes consolidated while a read is in progress. Outside reads each flush goes out at once:
     * replay already flushes once per step, and a fan-out task writes one frame per connection, so
     * consolidating there only adds a scheduled task per subscriber per event (measured with the
     * fanout load test: ~15-20 % more server CPU at 1,000 and 10,000 subscribers).
     */
    private static final int EXPLICIT_FLUSH_AFTER_FLUSHES = 256;

    private final ServerContext server;
    private final WebSocketServerProtocolConfig wsConfig;
    private final ConnectionLimitFilter connectionLimit;
    private final ReloadingSslContext tls;
    private final CorsConfig cors;
    private final HttpApiHandler.Routes routes;

    public PushServerInitializer(ServerContext server, ConnectionLimiter connections) {
        this(server, connections, null);
    }

    /** @param tls the daemon's TLS context ({@code tls.certFile}), or null for plain TCP */
    public PushServerInitializer(ServerContext server, ConnectionLimiter connections, ReloadingSslContext tls) {
        this.server = server;
        this.tls = tls;
        this.connectionLimit = new ConnectionLimitFilter(connections, server.metrics());
        this.cors = Cors.config(server.config().security().allowedOrigins());
        WebAssets.get(); // read the browser files now: a jar without them fails here, not at the first request
        this.routes = new HttpApiHandler.Routes(server, this);
        Limits limits = server.config().limits();
        this.wsConfig = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath(LiveUpgradeGate.PATH)
                .checkStartsWith(true) // the path carries a query
                .handshakeTimeoutMillis(limits.handshakeTimeout().toMillis())
                .forceCloseTimeoutMillis(WebSocketClose.FORCE_CLOSE_MILLIS)
                // every close frame comes from WebSocketClose, once: Netty would echo invalid codes,
                // add "1000 Bye" to its own closes and close before the peer read them
                .handleCloseFrames(false)
                .sendCloseFrame(null)
                .decoderConfig(WebSocketDecoderConfig.newBuilder()
                        .maxFramePayloadLength(limits.maxFrameBytes())
                        .allowExtensions(limits.permessageDeflate())
                        .closeOnProtocolViolation(false) // LiveSessionHandler picks the code from the exception
                        .build())
                .build();
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        // A client that ends its side after its requests (shutdown(SHUT_WR), `nc -N`) still reads
        // their answers, a publish's 201 among them: the connection closes once they are out
        // (BackpressureHandler, HttpApiHandler), not at the FIN.
        ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
        if (tls != null) {
            // the context current now: a renewed certificate serves the next connection, open ones keep theirs
            SslHandler ssl = tls.newHandler(ch.alloc());
            ssl.setHandshakeTimeoutMillis(server.config().limits().handshakeTimeout().toMillis());
            ch.pipeline().addLast(HandlerNames.TLS, ssl);
        }
        ch.pipeline().addLast(HandlerNames.CONNECTION_LIMIT, connectionLimit);
        initHttp(ch.pipeline());
    }

    /**
     * The handlers every connection keeps below its protocol's codec, whatever it becomes; the
     * replay warm-up's connection has them too, so what it compiles is what the clients' writes run.
     */
    public static void addConnectionHandlers(ChannelPipeline p) {
        p.addLast(HandlerNames.BACKPRESSURE, new BackpressureHandler());
        p.addLast(HandlerNames.FLUSH_CONSOLIDATION, new FlushConsolidationHandler(EXPLICIT_FLUSH_AFTER_FLUSHES, false));
    }

    /** The HTTP pipeline every connection starts with, after the accept-time filter. */
    void initHttp(ChannelPipeline p) {
        Limits limits = server.config().limits();
        addConnectionHandlers(p);
        p.addLast(HandlerNames.HTTP_CODEC, new HttpServerCodec(new HttpDecoderConfig()
                .setMaxInitialLineLength(MAX_INITIAL_LINE).setMaxHeaderSize(MAX_HEADER_SIZE).setMaxChunkSize(8192),
                // Netty's default (128) is below what HttpApiHandler queues: it would refuse the
                // 129th pipelined request with a 400 before the handler could answer the first ones
                MAX_PIPELINE_DEPTH));
        p.addLast(HandlerNames.HTTP_KEEPALIVE, new HttpServerKeepAliveHandler());
        p.addLast(HandlerNames.HTTP_AGGREGATOR, new JsonHttpObjectAggregator(limits.maxPublishBytes()));
        p.addLast(HandlerNames.HTTP_REQUEST_TIMEOUT, new RequestTimeoutHandler(limits));
        p.addLast(HandlerNames.HTTP_CORS, Cors.handler(cors));
        p.addLast(HandlerNames.HTTP_API, new HttpApiHandler(server, routes));
    }

    /**
     * The post-upgrade pipeline: called by the {@code /v1/live} gate (from {@code http-api}'s
     * context) with a request that passed its checks. The HTTP-only handlers leave, the WebSocket
     * handlers come in after {@code http-aggregator}, and the request goes on to the handshake;
     * Netty's handshaker then swaps {@code http-codec} for the WebSocket codec and removes the
     * aggregator.
     */
    void upgradeToWebSocket(ChannelHandlerContext httpApi, FullHttpRequest upgrade, String clientIp, Grant grant,
                            List<ClientMessage.Subscribe> initial) {
        Limits limits = server.config().limits();
        ChannelPipeline p = httpApi.pipeline();
        // flush-consolidation stays, though it costs a context per connection: without it every one
        // of seven bursts of 15,000 handshakes (idle.mjs) ran at 250-540/s; with it 460-2,680/s
        p.remove(HandlerNames.HTTP_KEEPALIVE);
        p.remove(HandlerNames.HTTP_REQUEST_TIMEOUT);
        p.remove(HandlerNames.HTTP_CORS);
        p.remove(HandlerNames.HTTP_API);
        if (limits.permessageDeflate()) {
            // maxAllocation bounds what one compressed message may inflate to (no zip bombs).
            // Netty's cap is on the inflate buffer's capacity, which it fills in steps: at exactly
            // maxFrameBytes a message some hundred bytes short of it failed. The exact limit on
            // what a message inflates to is InboundFrameHandler's.
            p.addLast(HandlerNames.WS_COMPRESSION,
                    new WebSocketServerCompressionHandler(limits.maxFrameBytes() + INFLATE_SLACK));
        }
        p.addLast(HandlerNames.WS_HEARTBEAT, new HeartbeatHandler(server.config().heartbeat().interval(),
                server.config().heartbeat().timeout()));
        p.addLast(HandlerNames.WS_INBOUND, new InboundFrameHandler(limits.maxInboundMessagesPerSecond(), limits.maxFrameBytes(),
                server.metrics()));
        p.addLast(HandlerNames.WS_PROTOCOL, new LiveProtocolHandler(wsConfig));
        p.addLast(HandlerNames.WS_AGGREGATOR, new WebSocketFrameAggregator(limits.maxFrameBytes()));
        p.addLast(HandlerNames.WS_SESSION, new LiveSessionHandler(server, clientIp, grant, initial));
        applyLiveSocketOptions(httpApi.channel());
        p.context(HandlerNames.HTTP_AGGREGATOR).fireChannelRead(upgrade);
    }

    /**
     * The SSE pipeline: called by the {@code /v1/sse} route (from {@code http-api}'s context) with
     * a request that passed its checks. The {@code 200 text/event-stream} head goes out through
     * {@code http-cors} (chunked on HTTP/1.1, which proxies pass through as it comes; an HTTP/1.0
     * stream ends with the connection), then every {@code http-*} handler but the codec leaves and
     * {@code sse-session} comes in, which writes the stream through an {@code SseSink}.
     */
    void upgradeToSse(ChannelHandlerContext httpApi, FullHttpRequest req, List<ClientMessage.Subscribe> topics,
                      String clientIp, Grant grant) {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8")
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE)
                .set("X-Accel-Buffering", "no"); // nginx: pass each chunk on at once
        boolean chunked = req.protocolVersion().isKeepAliveDefault();
        if (chunked) {
            HttpUtil.setTransferEncodingChunked(head, true);
        } else {
            head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        httpApi.write(head);
        ChannelPipeline p = httpApi.pipeline();
        // flush-consolidation stays, though it costs a context per connection: without it every one
        // of seven bursts of 15,000 handshakes (idle.mjs) ran at 250-540/s; with it 460-2,680/s
        p.remove(HandlerNames.HTTP_KEEPALIVE);
        p.remove(HandlerNames.HTTP_AGGREGATOR);
        p.remove(HandlerNames.HTTP_REQUEST_TIMEOUT);
        p.remove(HandlerNames.HTTP_CORS);
        p.remove(HandlerNames.HTTP_API);
        p.addLast(HandlerNames.SSE_SESSION, new SseSessionHandler(server.sessions(),
                server.config().heartbeat().sseInterval(), clientIp, grant, topics, chunked));
        applyLiveSocketOptions(httpApi.channel());
    }

    /**
     * {@code fanout.tcpNoDelay: false}: a connection that becomes a live stream leaves Nagle's
     * algorithm on from its 101 or its {@code 200 text/event-stream} on (every connection starts
     * with it off, so HTTP answers go out at once). Close frames are not held: the close sends a
     * FIN right behind them, which pushes out what Nagle holds.
     */
    private void applyLiveSocketOptions(Channel ch) {
        if (!server.config().fanout().tcpNoDelay()) {
            ch.config().setOption(ChannelOption.TCP_NODELAY, false);
        }
    }

    /**
     * After the frame decoder failed, drops the rest of the input undecoded: nothing the peer sends
     * after a broken frame is a frame we would act on, and Netty's failed decoder would skip it
     * one byte per call (about 2 MB/s of CPU for a peer that keeps sending). The peer's FIN, or
     * the closing handshake's timeout, then ends the connection. Event loop only.
     */
    static void discardWebSocketInput(ChannelPipeline p) {
        ChannelHandlerContext decoder = p.context(WebSocketFrameDecoder.class);
        if (decoder != null) {
            p.replace(decoder.name(), HandlerNames.WS_DISCARD, DISCARD);
        }
        // permessage-deflate's inflater: one that failed rethrows its failure when the channel
        // goes inactive, which would stop the event before the session hears of it
        ChannelHandlerContext inflater;
        while ((inflater = p.context(WebSocketExtensionDecoder.class)) != null) {
            p.remove(inflater.name());
        }
    }

    private static final ChannelHandler DISCARD = new InputDiscarder();

    @ChannelHandler.Sharable
    private static final class InputDiscarder extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }
    }
}
