package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.pushd.protocol.ClientMessage;
import io.pushd.protocol.ErrorCodes;
import io.pushd.protocol.ProtocolException;
import io.pushd.protocol.SubscriptionRequest;
import io.pushd.server.auth.AccessDecision;
import io.pushd.server.auth.Redaction;
import io.pushd.server.lifecycle.ServerState;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.sse.SseCursor;
import java.util.List;

/**
 * {@code GET /v1/sse}: the checks a stream request must pass, with the same query as
 * {@code /v1/live} plus {@code Last-Event-ID}. Only a request that can never succeed gets an
 * error status (wrong method, a foreign Origin, a bad query or Last-Event-ID); everything a later
 * try may get past (the drain, a limit, the start-up ramp) is answered 200 and ended with
 * {@code event: close} and a hint by the session, because a non-200 makes a browser's
 * EventSource give up for good. A request that passes is handed to
 * {@link PushServerInitializer#upgradeToSse}.
 */
final class SseRoute {

    static final String PATH = "/v1/sse";
    private static final String TRANSPORT = "sse";

    private final ServerContext server;
    private final PushServerInitializer pipelines;

    SseRoute(ServerContext server, PushServerInitializer pipelines) {
        this.server = server;
        this.pipelines = pipelines;
    }

    /** Returns true when the request became a stream (and is no longer ours). */
    boolean pass(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri) {
        if (!req.method().equals(HttpMethod.GET)) {
            HttpResponses.methodNotAllowed(ctx, req, "GET", "GET");
            return false;
        }
        if (!Cors.streamOriginAllowed(server.config().security().allowedOrigins(),
                req.headers().get(HttpHeaderNames.ORIGIN))) {
            refuse(ctx, req, HttpResponses.error(HttpResponseStatus.FORBIDDEN, ErrorCodes.ORIGIN_NOT_ALLOWED,
                    "Origin not allowed"));
            return false;
        }
        List<ClientMessage.Subscribe> topics;
        try {
            topics = SubscriptionRequest.parse(uri.parameters(), server.config().limits().maxTopicsPerConnection(),
                    server.config().server().defaultTopicOrNull());
            SseCursor.requireResumable(topics);
            topics = SseCursor.resume(topics, req.headers().get("Last-Event-ID"));
        } catch (ProtocolException e) {
            // it quotes the query: a token sent as a topic or an ID comes back masked
            refuse(ctx, req, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, e.code(), Redaction.text(e.getMessage())));
            return false;
        }
        // a missing or bad token can never succeed by retrying: 401/403 (EventSource then gives up, as it should)
        AccessDecision access = AccessAnswers.subscribe(server, ctx, req, topics, TRANSPORT);
        if (access == null) {
            return false;
        }
        if (!server.lifecycle().isServing()) {
            server.metrics().handshake(server.lifecycle().state() == ServerState.STARTING
                    ? ServerMetrics.Handshake.REFUSED_STARTING : ServerMetrics.Handshake.REFUSED_DRAINING, TRANSPORT);
            // the session ends the stream at once with 1012 and a hint (200, never a 503)
        }
        String clientIp = server.clientAddress().resolveAll(ctx.channel().remoteAddress(),
                req.headers().getAll("X-Forwarded-For"));
        pipelines.upgradeToSse(ctx, req, topics, clientIp, access.grant());
        return false; // the request itself is done with: the stream's head is out
    }

    private void refuse(ChannelHandlerContext ctx, FullHttpRequest req, FullHttpResponse res) {
        server.metrics().handshake(ServerMetrics.Handshake.REJECTED_REQUEST, TRANSPORT);
        HttpResponses.reply(ctx, req, res);
    }
}
