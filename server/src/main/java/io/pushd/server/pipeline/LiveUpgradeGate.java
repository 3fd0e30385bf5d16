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
import java.util.List;

/**
 * {@code /v1/live}: the checks an upgrade request must pass before the WebSocket handshake, each
 * mistake with its own answer (method, upgrade headers, Origin, the subscription query, the
 * token and its topics, the drain). A request that passes is handed to {@link PushServerInitializer#upgradeToWebSocket}.
 */
final class LiveUpgradeGate {

    static final String PATH = "/v1/live";

    private final ServerContext server;
    private final PushServerInitializer pipelines;

    LiveUpgradeGate(ServerContext server, PushServerInitializer pipelines) {
        this.server = server;
        this.pipelines = pipelines;
    }

    /** Returns true when the request was handed on to the WebSocket handshake (and is no longer ours). */
    boolean pass(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder uri) {
        if (!req.method().equals(HttpMethod.GET)) {
            HttpResponses.methodNotAllowed(ctx, req, "GET with a WebSocket upgrade", "GET");
            return false;
        }
        FullHttpResponse refusal = refusal(req);
        if (refusal != null) {
            server.metrics().handshake(ServerMetrics.Handshake.REJECTED_REQUEST);
            HttpResponses.send(ctx, refusal, true);
            return false;
        }
        List<ClientMessage.Subscribe> subscriptions;
        try {
            subscriptions = SubscriptionRequest.parse(uri.parameters(),
                    server.config().limits().maxTopicsPerConnection(), server.config().server().defaultTopicOrNull());
        } catch (ProtocolException e) {
            server.metrics().handshake(ServerMetrics.Handshake.REJECTED_REQUEST);
            // it quotes the query: a token sent as a topic or an ID comes back masked
            HttpResponses.send(ctx, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, e.code(), Redaction.text(e.getMessage())),
                    true);
            return false;
        }
        AccessDecision access = AccessAnswers.subscribe(server, ctx, req, subscriptions, "websocket");
        if (access == null) {
            return false;
        }
        if (server.lifecycle().state() == ServerState.STARTING) {
            // The port opens before the warm-ups: the upgrade completes so that the session's 1012
            // tells the client when to come back (a browser never sees a 503's Retry-After).
            server.metrics().handshake(ServerMetrics.Handshake.REFUSED_STARTING);
        } else if (!server.lifecycle().isServing()) {
            server.metrics().handshake(ServerMetrics.Handshake.REFUSED_DRAINING);
            HttpResponses.send(ctx, HttpResponses.notAccepting(), true);
            return false;
        }
        String clientIp = server.clientAddress().resolveAll(ctx.channel().remoteAddress(),
                req.headers().getAll("X-Forwarded-For"));
        pipelines.upgradeToWebSocket(ctx, req, clientIp, access.grant(), subscriptions);
        return true;
    }

    /** The answer to malformed upgrade headers or a foreign Origin, or null when they are fine. */
    private FullHttpResponse refusal(FullHttpRequest req) {
        String problem = HandshakeCheck.problem(req);
        if (problem != null && problem.equals(HandshakeCheck.UNSUPPORTED_VERSION)) {
            FullHttpResponse res = HttpResponses.error(HttpResponseStatus.UPGRADE_REQUIRED, ErrorCodes.BAD_REQUEST,
                    "unsupported Sec-WebSocket-Version (expected: 13)");
            res.headers().set(HttpHeaderNames.SEC_WEBSOCKET_VERSION, "13");
            return res;
        }
        if (problem != null) {
            return HttpResponses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST, problem);
        }
        List<String> allowedOrigins = server.config().security().allowedOrigins();
        String origin = req.headers().get(HttpHeaderNames.ORIGIN);
        if (!allowedOrigins.isEmpty() && (origin == null || !allowedOrigins.contains(origin))) {
            return HttpResponses.error(HttpResponseStatus.FORBIDDEN, ErrorCodes.ORIGIN_NOT_ALLOWED,
                    "Origin not allowed");
        }
        return null;
    }
}
