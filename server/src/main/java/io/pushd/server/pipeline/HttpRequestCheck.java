package io.pushd.server.pipeline;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.pushd.protocol.ErrorCodes;

/**
 * What every request must satisfy before any route looks at it (REST and upgrades alike): an
 * HTTP/1.x version, one {@code Host} (RFC 9112 §3.2), no expectation but {@code 100-continue}
 * (which the aggregator has answered and removed by now), and a request target whose
 * percent-encoding decodes.
 */
final class HttpRequestCheck {

    /** Why a request is refused; {@code close} when the rest of the connection cannot be trusted. */
    record Problem(HttpResponseStatus status, String code, String message, boolean close) {
    }

    private static final String IDEMPOTENCY_KEY = "Idempotency-Key";

    private HttpRequestCheck() {
    }

    /**
     * The request target in origin form: an absolute-form target ({@code http://host/path?q},
     * which a server must accept, RFC 9112 3.2.2, and proxies send) without its scheme and
     * authority; any other target as it is.
     */
    static String originForm(String target) {
        if (target.length() < 8 || target.charAt(0) == '/') {
            return target;
        }
        String lower = target.substring(0, 8).toLowerCase(java.util.Locale.ROOT);
        int authority = lower.startsWith("http://") ? 7 : lower.startsWith("https://") ? 8 : -1;
        if (authority < 0) {
            return target;
        }
        int path = target.indexOf('/', authority);
        int query = target.indexOf('?', authority);
        if (path < 0 || (query >= 0 && query < path)) {
            return query < 0 ? "/" : "/" + target.substring(query);
        }
        return target.substring(path);
    }

    /**
     * Null when the request may be routed, else what to answer. Decodes {@code target}'s path and
     * query, which the decoder then keeps, so routing does not decode them again.
     */
    static Problem problem(HttpRequest req, QueryStringDecoder target) {
        HttpVersion v = req.protocolVersion();
        // Netty's decoder accepts any NAME/x.y as a version; it only knows how to speak HTTP/1.x.
        if (!v.protocolName().equals("HTTP")) {
            return new Problem(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
                    "not an HTTP request (expected: HTTP/1.1)", true);
        }
        if (v.majorVersion() != 1) {
            // RFC 9110 §6.2: a higher 1.x minor is served as 1.1; another major version is not spoken here
            return new Problem(HttpResponseStatus.HTTP_VERSION_NOT_SUPPORTED, ErrorCodes.HTTP_VERSION_NOT_SUPPORTED,
                    "HTTP version " + v.majorVersion() + "." + v.minorVersion() + " not supported (expected: HTTP/1.1)",
                    true);
        }
        int hosts = req.headers().getAll(HttpHeaderNames.HOST).size();
        if (hosts > 1) {
            return new Problem(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
                    "more than one Host header", true);
        }
        if (hosts == 0 && v.minorVersion() >= 1) {
            return new Problem(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
                    "missing Host header (required in HTTP/1.1)", true);
        }
        // Which of two would count is a guess that another hop may make differently (a proxy
        // that checks the first token, the server the other): one each, or the request is refused.
        if (req.headers().getAll(HttpHeaderNames.AUTHORIZATION).size() > 1) {
            return new Problem(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
                    "more than one Authorization header", false);
        }
        if (req.headers().getAll(IDEMPOTENCY_KEY).size() > 1) {
            return new Problem(HttpResponseStatus.BAD_REQUEST, ErrorCodes.INVALID_IDEMPOTENCY_KEY,
                    "more than one Idempotency-Key header", false);
        }
        if (v.minorVersion() >= 1 && req.headers().contains(HttpHeaderNames.EXPECT)) {
            // RFC 9110 §10.1.1. The aggregator read the body by its length, as for any request (had
            // the codec been told to skip it, a body sent anyway would be parsed as the next request)
            return new Problem(HttpResponseStatus.EXPECTATION_FAILED, ErrorCodes.EXPECTATION_FAILED,
                    "unsupported expectation (expected: Expect: 100-continue, or none)", false);
        }
        try {
            target.path();
            target.parameters();
        } catch (IllegalArgumentException e) {
            // the framing was fine, so the connection stays usable
            return new Problem(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
                    "malformed percent-encoding in the request target", false);
        }
        return null;
    }
}
