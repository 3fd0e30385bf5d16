package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.pushd.protocol.ClientMessage;
import io.pushd.protocol.ErrorCodes;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.ProtocolException;
import io.pushd.protocol.SubscriptionRequest;
import io.pushd.protocol.TopicName;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.store.StorageFullException;
import io.pushd.server.history.TopicRange;
import io.pushd.server.history.Publisher;
import io.pushd.server.history.TopicLimitException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side: publish, topic info, health and readiness, and the checks a {@code /v1/live}
 * request must pass before it is handed on to the WebSocket handshake. Per connection (it is in
 * every HTTP pipeline until an upgrade removes it).
 */
final class HttpApiHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger log = LoggerFactory.getLogger(HttpApiHandler.class);

    /** Subscriptions parsed from the upgrade query, read by {@link LiveSessionHandler}. */
    static final AttributeKey<List<ClientMessage.Subscribe>> INITIAL_SUBSCRIPTIONS =
            AttributeKey.valueOf("push.initialSubscriptions");
    /** The address the connection counts against for admission (see ClientAddress). */
    static final AttributeKey<String> CLIENT_IP = AttributeKey.valueOf("push.clientIp");

    static final String LIVE_PATH = "/v1/live";
    private static final String TOPICS_PREFIX = "/v1/topics/";
    private static final String RETRY_AFTER_SECONDS = "1";
    /** Space comes back by an operator or by retention, not within a second. */
    private static final String STORAGE_RETRY_AFTER_SECONDS = "5";

    /**
     * Pipelined requests that may wait for their turn. Reading pauses while any wait, so only the
     * rest of one socket read can arrive; a client that pipelines further ahead gets the answers
     * queued so far, the last one with {@code Connection: close}, and must resend the rest.
     */
    static final int MAX_QUEUED_REQUESTS = 256;

    private final ServerContext server;
    /**
     * HTTP/1.1 answers go out in request order. A publish is answered later, from the writer, and
     * a peer that does not read its answers makes the channel unwritable; requests pipelined
     * behind either wait here (and reading pauses) until it is their turn.
     */
    private final ArrayDeque<FullHttpRequest> queued = new ArrayDeque<>();
    private boolean publishInFlight;
    private boolean draining;
    private boolean overflowed; // the last queued request answers with Connection: close
    private BackpressureHandler backpressure;

    HttpApiHandler(ServerContext server) {
        super(false); // the upgrade request is passed on, so release explicitly
        this.server = server;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        backpressure = BackpressureHandler.of(ctx.channel());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof FullHttpRequest req) {
            if (overflowed) {
                req.release(); // the connection closes after the queued answers
                return;
            }
            if (publishInFlight || !queued.isEmpty() || !ctx.channel().isWritable()) {
                enqueue(ctx, req);
                return;
            }
        }
        super.channelRead(ctx, msg);
    }

    private void enqueue(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (queued.size() >= MAX_QUEUED_REQUESTS) {
            log.debug("[{}] more than {} pipelined requests waiting; closing after their answers",
                    ctx.channel().id().asShortText(), MAX_QUEUED_REQUESTS);
            HttpUtil.setKeepAlive(queued.peekLast(), false);
            overflowed = true;
            req.release();
            return;
        }
        queued.add(req);
        if (backpressure != null) {
            backpressure.pause(BackpressureHandler.Reason.REQUESTS_QUEUED);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isWritable()) {
            drainQueued(ctx);
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        boolean passedOn = false;
        try {
            if (req.decoderResult().isFailure()) {
                HttpResponses.send(ctx, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
                        "malformed HTTP request"), true);
                return;
            }
            QueryStringDecoder uri = new QueryStringDecoder(req.uri(), StandardCharsets.UTF_8);
            HttpRequestCheck.Problem problem = HttpRequestCheck.problem(req, uri);
            if (problem != null) {
                log.debug("[{}] refused request: {}", ctx.channel().id().asShortText(), problem.message());
                FullHttpResponse res = HttpResponses.error(problem.status(), problem.code(), problem.message());
                if (problem.close()) {
                    HttpResponses.send(ctx, res, true);
                } else {
                    reply(ctx, req, res);
                }
                return;
            }
            String path = uri.path();
            if (path.equals(LIVE_PATH)) {
                passedOn = live(ctx, req, uri);
            } else if (path.equals("/metrics")) {
                onlyGet(ctx, req, () -> reply(ctx, req, HttpResponses.text(HttpResponseStatus.OK,
                        server.metrics().scrape(), "text/plain; version=0.0.4; charset=utf-8")));
            } else if (path.equals("/healthz")) {
                onlyGet(ctx, req, () -> reply(ctx, req, HttpResponses.json(HttpResponseStatus.OK,
                        status("up"))));
            } else if (path.equals("/readyz")) {
                onlyGet(ctx, req, () -> reply(ctx, req, server.lifecycle().isReady()
                        ? HttpResponses.json(HttpResponseStatus.OK, ProtocolCodec.mapper().createObjectNode()
                                .put("status", "ready") // still ready when the disk is full: subscribers are served
                                .put("store", server.history().writable() ? "writable" : "full"))
                        : withRetryAfter(HttpResponses.json(HttpResponseStatus.SERVICE_UNAVAILABLE,
                                status(server.lifecycle().state().name().toLowerCase())))));
            } else if (path.startsWith(TOPICS_PREFIX)) {
                topics(ctx, req, path.substring(TOPICS_PREFIX.length()));
            } else {
                reply(ctx, req, HttpResponses.error(HttpResponseStatus.NOT_FOUND, ErrorCodes.NOT_FOUND,
                        "no resource at " + shorten(path)));
            }
        } finally {
            if (!passedOn) {
                ReferenceCountUtil.release(req);
            }
        }
    }

    private void topics(ChannelHandlerContext ctx, FullHttpRequest req, String rest) {
        int slash = rest.indexOf('/');
        String topic = slash < 0 ? rest : rest.substring(0, slash);
        String tail = slash < 0 ? "" : rest.substring(slash);
        if (!tail.isEmpty() && !tail.equals("/events")) {
            reply(ctx, req, HttpResponses.error(HttpResponseStatus.NOT_FOUND, ErrorCodes.NOT_FOUND,
                    "no resource at " + shorten(req.uri())));
            return;
        }
        if (!TopicName.isValid(topic)) {
            reply(ctx, req, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_TOPIC,
                    "invalid topic '" + shorten(topic) + "' (expected: 1-200 characters of [A-Za-z0-9_.:-])"));
            return;
        }
        if (tail.isEmpty()) {
            onlyGet(ctx, req, () -> topicInfo(ctx, req, topic));
        } else if (!req.method().equals(HttpMethod.POST)) {
            FullHttpResponse res = HttpResponses.error(HttpResponseStatus.METHOD_NOT_ALLOWED,
                    ErrorCodes.METHOD_NOT_ALLOWED, req.method() + " not allowed (expected: POST)");
            res.headers().set(HttpHeaderNames.ALLOW, "POST");
            reply(ctx, req, res);
        } else {
            publish(ctx, req, topic);
        }
    }

    private void topicInfo(ChannelHandlerContext ctx, FullHttpRequest req, String topic) {
        TopicRange range = server.history().range(topic);
        var body = ProtocolCodec.mapper().createObjectNode();
        String epoch = server.history().epoch(topic);
        body.put("topic", topic);
        body.put("epoch", epoch);
        body.put("head", range.headId(epoch) == null ? null : range.headId(epoch).toString());
        body.put("oldest", range.oldestId(epoch) == null ? null : range.oldestId(epoch).toString());
        reply(ctx, req, HttpResponses.json(HttpResponseStatus.OK, body));
    }

    private void publish(ChannelHandlerContext ctx, FullHttpRequest req, String topic) {
        String contentType = req.headers().get(HttpHeaderNames.CONTENT_TYPE);
        CharSequence mime = contentType == null ? null : HttpUtil.getMimeType(contentType);
        if (mime == null || !mime.toString().trim().equalsIgnoreCase("application/json")) {
            reply(ctx, req, HttpResponses.error(HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
                    ErrorCodes.UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json"));
            return;
        }
        String key = req.headers().get("Idempotency-Key");
        if (key != null && !isValidKey(key)) {
            reply(ctx, req, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_IDEMPOTENCY_KEY,
                    "Idempotency-Key must be 1-200 printable ASCII characters"));
            return;
        }
        byte[] data;
        try {
            byte[] body = new byte[req.content().readableBytes()];
            req.content().getBytes(req.content().readerIndex(), body);
            data = ProtocolCodec.canonicalData(body);
        } catch (ProtocolException e) {
            reply(ctx, req, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, e.code(), e.getMessage()));
            return;
        }
        if (!server.lifecycle().isAcceptingWork()) {
            reply(ctx, req, notAccepting());
            return;
        }
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        publishInFlight = true;
        server.publisher().publish(topic, data, key).whenComplete((result, failure) -> {
            FullHttpResponse res;
            if (failure != null) {
                res = failure instanceof RejectedExecutionException ? notAccepting()
                        : failure instanceof StorageFullException ? storageFull()
                        : failure instanceof TopicLimitException ? HttpResponses.error(
                                HttpResponseStatus.INSUFFICIENT_STORAGE, ErrorCodes.TOO_MANY_TOPICS, failure.getMessage())
                        : HttpResponses.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, ErrorCodes.INTERNAL,
                                "the event was not stored");
            } else {
                res = HttpResponses.json(result.created() ? HttpResponseStatus.CREATED : HttpResponseStatus.OK,
                        published(topic, result));
            }
            HttpUtil.setKeepAlive(res, keepAlive);
            ctx.executor().execute(() -> {
                ctx.writeAndFlush(res);
                publishInFlight = false;
                drainQueued(ctx);
            });
        });
    }

    private void drainQueued(ChannelHandlerContext ctx) {
        if (draining) {
            return; // a flush below made the channel writable again: the loop already runs
        }
        draining = true;
        try {
            FullHttpRequest next;
            while (!publishInFlight && ctx.channel().isActive() && ctx.channel().isWritable()
                    && (next = queued.poll()) != null) {
                channelRead0(ctx, next);
            }
        } finally {
            draining = false;
        }
        if (queued.isEmpty() && !overflowed && ctx.channel().isActive() && backpressure != null) {
            backpressure.resume(BackpressureHandler.Reason.REQUESTS_QUEUED);
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseQueued();
        if (backpressure != null) {
            backpressure.resume(BackpressureHandler.Reason.REQUESTS_QUEUED); // upgraded: the WebSocket reads on
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        releaseQueued();
        super.channelInactive(ctx);
    }

    private void releaseQueued() {
        FullHttpRequest r;
        while ((r = queued.poll()) != null) {
            r.release();
        }
    }

    private Object published(String topic, Publisher.Result result) {
        var body = ProtocolCodec.mapper().createObjectNode();
        body.put("topic", topic);
        body.put("id", new EventId(server.history().epoch(topic), result.seq()).toString());
        return body;
    }

    /** Returns true when the request was handed on to the WebSocket handshake. */
    private boolean live(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri) {
        if (!req.method().equals(HttpMethod.GET)) {
            FullHttpResponse res = HttpResponses.error(HttpResponseStatus.METHOD_NOT_ALLOWED,
                    ErrorCodes.METHOD_NOT_ALLOWED, req.method() + " not allowed (expected: GET with a WebSocket upgrade)");
            res.headers().set(HttpHeaderNames.ALLOW, "GET");
            reply(ctx, req, res);
            return false;
        }
        String problem = HandshakeCheck.problem(req);
        if (problem != null) {
            FullHttpResponse res;
            server.metrics().handshake(ServerMetrics.Handshake.REJECTED_REQUEST);
            if (problem.equals(HandshakeCheck.UNSUPPORTED_VERSION)) {
                res = HttpResponses.error(HttpResponseStatus.UPGRADE_REQUIRED, ErrorCodes.BAD_REQUEST,
                        "unsupported Sec-WebSocket-Version (expected: 13)");
                res.headers().set(HttpHeaderNames.SEC_WEBSOCKET_VERSION, "13");
            } else {
                res = HttpResponses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST, problem);
            }
            HttpResponses.send(ctx, res, true);
            return false;
        }
        List<String> allowedOrigins = server.config().security().allowedOrigins();
        if (!allowedOrigins.isEmpty()) {
            String origin = req.headers().get(HttpHeaderNames.ORIGIN);
            if (origin == null || !allowedOrigins.contains(origin)) {
                server.metrics().handshake(ServerMetrics.Handshake.REJECTED_REQUEST);
                HttpResponses.send(ctx, HttpResponses.error(HttpResponseStatus.FORBIDDEN, ErrorCodes.ORIGIN_NOT_ALLOWED,
                        "Origin not allowed"), true);
                return false;
            }
        }
        List<ClientMessage.Subscribe> subscriptions;
        try {
            subscriptions = SubscriptionRequest.parse(uri.parameters(),
                    server.config().limits().maxTopicsPerConnection());
        } catch (ProtocolException e) {
            server.metrics().handshake(ServerMetrics.Handshake.REJECTED_REQUEST);
            HttpResponses.send(ctx, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, e.code(), e.getMessage()),
                    true);
            return false;
        }
        if (!server.lifecycle().isAcceptingWork()) {
            server.metrics().handshake(ServerMetrics.Handshake.REFUSED_DRAINING);
            HttpResponses.send(ctx, notAccepting(), true);
            return false;
        }
        ctx.channel().attr(INITIAL_SUBSCRIPTIONS).set(subscriptions);
        ctx.channel().attr(CLIENT_IP).set(server.clientAddress().resolve(ctx.channel().remoteAddress(),
                req.headers().get("X-Forwarded-For")));
        // From here on this connection speaks WebSocket: the HTTP handlers step aside.
        ctx.pipeline().remove(HandlerNames.HTTP_KEEPALIVE);
        ctx.pipeline().remove(HandlerNames.HTTP_REQUEST_TIMEOUT);
        ctx.pipeline().remove(this);
        ctx.fireChannelRead(req);
        return true;
    }

    private void onlyGet(ChannelHandlerContext ctx, FullHttpRequest req, Runnable action) {
        if (req.method().equals(HttpMethod.GET) || req.method().equals(HttpMethod.HEAD)) {
            action.run();
        } else {
            FullHttpResponse res = HttpResponses.error(HttpResponseStatus.METHOD_NOT_ALLOWED,
                    ErrorCodes.METHOD_NOT_ALLOWED, req.method() + " not allowed (expected: GET)");
            res.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
            reply(ctx, req, res);
        }
    }

    private static FullHttpResponse notAccepting() {
        return withRetryAfter(HttpResponses.error(HttpResponseStatus.SERVICE_UNAVAILABLE, ErrorCodes.NOT_ACCEPTING,
                "the server is not accepting new work; retry later"));
    }

    /** 507: the event was not stored (the disk is full); nothing was acknowledged, retrying is safe. */
    private static FullHttpResponse storageFull() {
        FullHttpResponse res = HttpResponses.error(HttpResponseStatus.INSUFFICIENT_STORAGE, ErrorCodes.STORAGE_FULL,
                "the event was not stored: the server's disk is full; retry later");
        res.headers().set(HttpHeaderNames.RETRY_AFTER, STORAGE_RETRY_AFTER_SECONDS);
        return res;
    }

    private static FullHttpResponse withRetryAfter(FullHttpResponse res) {
        res.headers().set(HttpHeaderNames.RETRY_AFTER, RETRY_AFTER_SECONDS);
        return res;
    }

    private static Object status(String status) {
        return ProtocolCodec.mapper().createObjectNode().put("status", status);
    }

    private static void reply(ChannelHandlerContext ctx, FullHttpRequest req, FullHttpResponse res) {
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        HttpUtil.setKeepAlive(res, keepAlive);
        if (req.method().equals(HttpMethod.HEAD)) {
            res.content().clear();
        }
        HttpResponses.send(ctx, res, !keepAlive);
    }

    static boolean isValidKey(String key) {
        if (key.isEmpty() || key.length() > 200) {
            return false;
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    private static String shorten(String s) {
        return s.length() > 60 ? s.substring(0, 60) + "..." : s;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException || !ctx.channel().isActive()) {
            log.debug("[{}] HTTP error: {}", ctx.channel().id().asShortText(), cause.toString());
            ctx.close();
            return;
        }
        if (cause instanceof DecoderException) { // bytes a codec could not make sense of: the client's doing
            log.debug("[{}] undecodable HTTP: {}", ctx.channel().id().asShortText(), cause.toString());
            HttpResponses.send(ctx, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
                    "malformed HTTP request"), true);
            return;
        }
        // A bug of ours while handling a request: the client gets a JSON 500 that names nothing inside.
        log.warn("[{}] HTTP request failed", ctx.channel().id().asShortText(), cause);
        HttpResponses.send(ctx, HttpResponses.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, ErrorCodes.INTERNAL,
                "internal error"), true);
    }
}
