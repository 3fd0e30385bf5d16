package io.pushd.server.pipeline;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.AttributeKey;
import io.pushd.server.auth.AccessDecision;
import io.pushd.server.auth.Grant;

/**
 * The HTTP side of {@code AccessControl}: the JSON 401/403 of a refusal, and the channel attribute
 * that carries an upgrade's grant to its session. Shared by every subscription gate (WebSocket,
 * SSE) and the publish route.
 */
final class AccessAnswers {

    /** The grant the gate's {@code AccessControl.subscribe} returned, read once by the session's handler. */
    static final AttributeKey<Grant> GRANT = AttributeKey.valueOf("push.grant");

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
}
