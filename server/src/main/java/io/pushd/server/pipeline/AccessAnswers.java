package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.pushd.server.auth.AccessDecision;
import io.pushd.protocol.ClientMessage;
import io.pushd.server.metrics.ServerMetrics;
import java.util.List;

/**
 * The HTTP side of {@code AccessControl}: the JSON 401/403 of a refusal. Shared by every subscription gate (WebSocket,
 * SSE) and the publish route.
 */
final class AccessAnswers {

    private AccessAnswers() {
    }

    /** {@code {"error":CODE,"message":TEXT}} with the status, and {@code WWW-Authenticate} on a 401. */
    static FullHttpResponse refusal(AccessDecision d) {
        FullHttpResponse res = HttpResponses.error(HttpResponseStatus.valueOf(d.status()), d.code(), d.message());
        if (d.wwwAuthenticate() != null) {
            res.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, d.wwwAuthenticate());
        }
        return res;
    }

    /**
     * The check every subscription gate makes before its stream starts: the request's token must cover
     * every topic. A refusal is answered here (401/403, then close) and counted for {@code transport};
     * returns null then. A browser sees the status (a close code after the upgrade would hide why).
     */
    static AccessDecision subscribe(ServerContext server, ChannelHandlerContext ctx, FullHttpRequest req,
                                    List<ClientMessage.Subscribe> topics, String transport) {
        String[] names = new String[topics.size()]; // a loop, not a stream: once per handshake
        for (int i = 0; i < names.length; i++) {
            names[i] = topics.get(i).topic();
        }
        AccessDecision access = server.sessions().access().subscribe(req.headers().get(HttpHeaderNames.AUTHORIZATION),
                req.uri(), List.of(names));
        if (access.allowed()) {
            return access;
        }
        server.metrics().handshake(ServerMetrics.Handshake.REFUSED_UNAUTHORIZED, transport);
        HttpResponses.send(ctx, refusal(access), true);
        return null;
    }
}
