package io.pushd.server.pipeline;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.pushd.protocol.ErrorCodes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side: checks each request ({@link HttpRequestCheck}), routes it ({@link StatusRoutes},
 * {@link TopicRoutes}, {@link StaticRoutes}, {@link LiveUpgradeGate}, {@link SseRoute}) and answers
 * pipelined requests in order. Per connection (it is in every HTTP pipeline until an upgrade removes it).
 */
final class HttpApiHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger log = LoggerFactory.getLogger(HttpApiHandler.class);

    /**
     * Pipelined requests that may wait for their turn. Reading pauses while any wait, so only the
     * rest of one socket read can arrive; a client that pipelines further ahead gets the answers
     * queued so far, the last one with {@code Connection: close}, and must resend the rest.
     */
    static final int MAX_QUEUED_REQUESTS = 256;

    /**
     * A request refused before it could be read whole (a body over the limit, bytes the codec
     * could not decode): its answer goes out in its turn, after those of the requests before it,
     * and the connection closes after it, since what follows on the wire cannot be trusted.
     */
    record Refusal(FullHttpResponse response) {
    }

    /** The routes hold no per-connection state: one set per server, shared by every connection's handler. */
    record Routes(StatusRoutes status, TopicRoutes topics, LiveUpgradeGate live, StaticRoutes assets, SseRoute sse) {
        Routes(ServerContext server, PushServerInitializer pipelines) {
            this(new StatusRoutes(server), new TopicRoutes(server), new LiveUpgradeGate(server, pipelines),
                    new StaticRoutes(server), new SseRoute(server, pipelines));
        }
    }

    private final StatusRoutes status;
    private final TopicRoutes topics;
    private final LiveUpgradeGate live;
    private final StaticRoutes assets;
    private final ServerContext server;
    private final SseRoute sse;
    /**
     * HTTP/1.1 answers go out in request order. A publish is answered later, from the writer, and
     * a peer that does not read its answers makes the channel unwritable; requests pipelined
     * behind either wait here (and reading pauses) until it is their turn.
     */
    private ArrayDeque<Object> queued; // requests and refusals; null until one has to wait (most connections: never)
    private boolean publishInFlight;
    private boolean draining;
    private boolean overflowed; // the last queued request answers with Connection: close
    private boolean refused; // a refusal is queued or sent: nothing after it is read
    /** A request not kept alive was taken: its answer closes the connection, nothing after it is run. */
    private boolean lastRequestTaken;
    private boolean inputShut; // the peer ended its side: close once every answer is out
    private BackpressureHandler backpressure;

    HttpApiHandler(ServerContext server, Routes routes) {
        super(false); // the upgrade request is passed on, so release explicitly
        this.status = routes.status();
        this.topics = routes.topics();
        this.live = routes.live();
        this.assets = routes.assets();
        this.server = server;
        this.sse = routes.sse();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        backpressure = BackpressureHandler.of(ctx.channel());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof FullHttpRequest req) {
            if (overflowed || refused) {
                req.release(); // the connection closes after the queued answers
                return;
            }
            if (publishInFlight || hasQueued() || !ctx.channel().isWritable()) {
                enqueue(ctx, req);
                return;
            }
        } else if (msg instanceof Refusal r) {
            refuse(ctx, r);
            return;
        }
        super.channelRead(ctx, msg);
    }

    /** Answers {@code r} now if nothing is ahead of it, else in its turn; then the connection closes. */
    private void refuse(ChannelHandlerContext ctx, Refusal r) {
        if (refused) {
            r.response().release();
            return;
        }
        refused = true;
        if (publishInFlight || hasQueued()) {
            if (queued == null) {
                queued = new ArrayDeque<>();
            }
            queued.add(r); // may exceed MAX_QUEUED_REQUESTS by this one: nothing is read after it
            if (backpressure != null) {
                backpressure.pause(BackpressureHandler.Reason.REQUESTS_QUEUED);
            }
            return;
        }
        HttpResponses.send(ctx, r.response(), true);
    }

    private boolean hasQueued() {
        return queued != null && !queued.isEmpty();
    }

    private void enqueue(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (queued == null) {
            queued = new ArrayDeque<>();
        }
        if (queued.size() >= MAX_QUEUED_REQUESTS) {
            log.debug("[{}] more than {} pipelined requests waiting; closing after their answers",
                    ctx.channel().id().asShortText(), MAX_QUEUED_REQUESTS);
            HttpUtil.setKeepAlive((FullHttpRequest) queued.peekLast(), false); // a refusal is never followed
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
            if (lastRequestTaken) {
                // pipelined behind a "Connection: close" answer: never run (a publish would be
                // stored with no way left to answer it); a client resends what was not answered
                return;
            }
            if (req.decoderResult().isFailure()) {
                refused = true; // what follows on the wire cannot be trusted: nothing after this is answered
                Throwable why = req.decoderResult().cause();
                FullHttpResponse res;
                if (why instanceof TooLongHttpLineException) {
                    res = HttpResponses.error(HttpResponseStatus.REQUEST_URI_TOO_LONG, ErrorCodes.BAD_REQUEST,
                            "request line longer than " + PushServerInitializer.MAX_INITIAL_LINE + " bytes");
                } else if (why instanceof TooLongHttpHeaderException) {
                    res = HttpResponses.error(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, ErrorCodes.BAD_REQUEST,
                            "headers larger than " + PushServerInitializer.MAX_HEADER_SIZE + " bytes");
                } else {
                    res = HttpResponses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
                            "malformed HTTP request");
                }
                HttpResponses.send(ctx, res, true);
                return;
            }
            req.setUri(HttpRequestCheck.originForm(req.uri())); // every route reads the origin form
            QueryStringDecoder uri = new QueryStringDecoder(req.uri(), StandardCharsets.UTF_8);
            HttpRequestCheck.Problem problem = HttpRequestCheck.problem(req, uri);
            if (problem != null) {
                log.debug("[{}] refused request: {}", ctx.channel().id().asShortText(), problem.message());
                FullHttpResponse res = HttpResponses.error(problem.status(), problem.code(), problem.message());
                if (problem.close()) {
                    refused = true;
                    HttpResponses.send(ctx, res, true);
                } else {
                    HttpResponses.reply(ctx, req, res);
                }
                return;
            }
            if (server.lifecycle().isStopping() && !LiveUpgradeGate.PATH.equals(uri.path())
                    && !SseRoute.PATH.equals(uri.path())) {
                // Stopping: the answer closes its connection (Connection: close), so a client sends
                // its next request on a new one, to a node that serves, and none is reset unanswered
                // by the stop. Upgrades and streams end with their own close (1012, event: close).
                HttpUtil.setKeepAlive(req, false);
            }
            lastRequestTaken = !HttpUtil.isKeepAlive(req);
            passedOn = route(ctx, req, uri);
        } finally {
            if (!passedOn) {
                ReferenceCountUtil.release(req);
            }
        }
    }

    /** Returns true when the request was handed on to the WebSocket handshake. */
    private boolean route(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri) {
        String path = uri.path();
        switch (path) {
            case LiveUpgradeGate.PATH -> {
                return live.pass(ctx, req, uri);
            }
            case SseRoute.PATH -> {
                return sse.pass(ctx, req, uri);
            }
            case "/metrics" -> status(ctx, req, path, () -> status.metrics(ctx, req));
            case "/healthz" -> status(ctx, req, path, () -> status.health(ctx, req));
            case "/readyz" -> status(ctx, req, path, () -> status.ready(ctx, req));
            case StaticRoutes.CLIENT_JS, StaticRoutes.CLIENT_TYPES, StaticRoutes.DEMO, StaticRoutes.DEMO_SLASH ->
                    assets.handle(ctx, req, path);
            default -> {
                if (path.startsWith(TopicRoutes.PREFIX)) {
                    CompletionStage<FullHttpResponse> answer = topics.handle(ctx, req, path);
                    if (answer != null) {
                        answerLater(ctx, HttpUtil.isKeepAlive(req), answer);
                    }
                } else {
                    HttpResponses.reply(ctx, req, HttpResponses.error(HttpResponseStatus.NOT_FOUND,
                            ErrorCodes.NOT_FOUND, "no resource at " + HttpResponses.shorten(path)));
                }
            }
        }
        return false;
    }

    private void status(ChannelHandlerContext ctx, FullHttpRequest req, String path, Runnable route) {
        // with server.adminPort set, the status routes are served there only
        if (server.config().server().adminPort() == null) {
            route.run();
        } else {
            HttpResponses.reply(ctx, req, HttpResponses.error(HttpResponseStatus.NOT_FOUND, ErrorCodes.NOT_FOUND,
                    "no resource at " + path));
        }
    }

    /** A publish, or a history page whose events were fetched: requests behind it wait until its answer is out. */
    private void answerLater(ChannelHandlerContext ctx, boolean keepAlive, CompletionStage<FullHttpResponse> answer) {
        publishInFlight = true;
        answer.thenAccept(res -> {
            HttpUtil.setKeepAlive(res, keepAlive);
            if (ctx.executor().inEventLoop()) {
                // answered already (this loop ran the publish itself): out now, not behind the fan-out task it queued
                answered(ctx, res, keepAlive);
            } else {
                ctx.executor().execute(() -> answered(ctx, res, keepAlive));
            }
        });
    }

    private void answered(ChannelHandlerContext ctx, FullHttpResponse res, boolean keepAlive) {
        HttpResponses.send(ctx, res, !keepAlive); // closing: FIN after the answer, no RST
        publishInFlight = false;
        drainQueued(ctx);
    }

    private void drainQueued(ChannelHandlerContext ctx) {
        if (draining) {
            return; // a flush below made the channel writable again: the loop already runs
        }
        draining = true;
        try {
            Object next;
            while (!publishInFlight && ctx.channel().isActive() && ctx.channel().isWritable()
                    && queued != null && (next = queued.poll()) != null) {
                if (next instanceof Refusal r) {
                    HttpResponses.send(ctx, r.response(), true);
                } else {
                    channelRead0(ctx, (FullHttpRequest) next);
                }
            }
        } finally {
            draining = false;
        }
        if (!hasQueued() && !overflowed && !refused && ctx.channel().isActive() && backpressure != null) {
            backpressure.resume(BackpressureHandler.Reason.REQUESTS_QUEUED);
        }
        closeIfAnswered(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof ChannelInputShutdownEvent) {
            inputShut = true;
            closeIfAnswered(ctx);
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    /** After the peer's FIN: the connection closes once nothing is in flight or waiting. */
    private void closeIfAnswered(ChannelHandlerContext ctx) {
        if (inputShut && !publishInFlight && !hasQueued() && ctx.channel().isActive()) {
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE); // after what was written
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
        Object q;
        while (queued != null && (q = queued.poll()) != null) {
            ReferenceCountUtil.release(q instanceof Refusal r ? r.response() : q);
        }
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
            if (overflowed) {
                return; // past what is answered anyway: the connection closes after the queued answers
            }
            refuse(ctx, new Refusal(HttpResponses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
                    "malformed HTTP request")));
            return;
        }
        // A bug of ours while handling a request: the client gets a JSON 500 that names nothing inside.
        log.warn("[{}] HTTP request failed", ctx.channel().id().asShortText(), cause);
        HttpResponses.send(ctx, HttpResponses.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, ErrorCodes.INTERNAL,
                "internal error"), true);
    }
}
