package io.pushd.server.pipeline;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.cors.CorsConfig;
import io.netty.handler.codec.http.cors.CorsConfigBuilder;
import io.netty.handler.codec.http.cors.CorsHandler;
import java.util.List;

/**
 * Cross-origin access for browsers, from {@code security.allowedOrigins} (the list that already
 * bounds WebSocket Origins; empty = any): Netty's {@link CorsHandler} answers preflights (a
 * publish from a page sends one for its JSON body and Idempotency-Key) and adds
 * {@code Access-Control-Allow-Origin} to every answer: the allowed Origin echoed with
 * {@code Vary: Origin}, or {@code *} when the list is empty.
 */
final class Cors {

    /** How long a browser may reuse a preflight's answer. */
    static final long PREFLIGHT_MAX_AGE_SECONDS = 600;

    private Cors() {
    }

    /**
     * The configuration every connection's handler shares: built once, since it is immutable and
     * building it (sets, maps, header values) cost a few hundred bytes and microseconds per accept.
     */
    static CorsConfig config(List<String> allowedOrigins) {
        CorsConfigBuilder b = allowedOrigins.isEmpty() ? CorsConfigBuilder.forAnyOrigin()
                : CorsConfigBuilder.forOrigins(allowedOrigins.toArray(String[]::new));
        return b.allowedRequestMethods(HttpMethod.GET, HttpMethod.POST)
                .allowedRequestHeaders(HttpHeaderNames.CONTENT_TYPE.toString(), "Idempotency-Key",
                        HttpHeaderNames.AUTHORIZATION.toString(), "Last-Event-ID")
                .maxAge(PREFLIGHT_MAX_AGE_SECONDS)
                .noPreflightResponseHeaders() // Netty's default Date header comes out quoted; Content-Length stays
                .build();
    }

    /** A connection's handler (it keeps the request's Origin, so it is not shareable). */
    static CorsHandler handler(CorsConfig config) {
        return new CorsHandler(config); // not short-circuit: each route decides about a foreign Origin
    }

    /**
     * Whether a stream may start for this Origin. Unlike a WebSocket upgrade, which browsers
     * always send with an Origin, a same-origin {@code EventSource} request carries none, so no
     * Origin is allowed; a foreign one is refused (403), as on {@code /v1/live}.
     */
    static boolean streamOriginAllowed(List<String> allowedOrigins, String origin) {
        return allowedOrigins.isEmpty() || origin == null || allowedOrigins.contains(origin);
    }
}
