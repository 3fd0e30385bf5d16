package io.pushd.server.pipeline;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import java.util.Base64;

/** Checks the WebSocket upgrade headers before the handshake so each mistake gets its own answer. */
final class HandshakeCheck {

    static final String UNSUPPORTED_VERSION = "unsupported version";

    private HandshakeCheck() {
    }

    /** Null when the request is a well-formed RFC 6455 upgrade, else what is wrong. */
    static String problem(HttpRequest req) {
        if (req.protocolVersion().compareTo(io.netty.handler.codec.http.HttpVersion.HTTP_1_1) < 0) {
            return "a WebSocket handshake needs HTTP/1.1 (RFC 6455 4.1)";
        }
        var h = req.headers();
        if (!h.containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true)) {
            return "missing or wrong Upgrade header (expected: websocket)";
        }
        if (!h.containsValue(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE, true)) {
            return "missing Connection: Upgrade header";
        }
        String version = h.get(HttpHeaderNames.SEC_WEBSOCKET_VERSION);
        if (version == null) {
            return "missing Sec-WebSocket-Version header (expected: 13)";
        }
        if (!version.trim().equals("13")) {
            return UNSUPPORTED_VERSION;
        }
        String key = h.get(HttpHeaderNames.SEC_WEBSOCKET_KEY);
        if (key == null) {
            return "missing Sec-WebSocket-Key header";
        }
        try {
            if (Base64.getDecoder().decode(key.trim()).length != 16) {
                return "malformed Sec-WebSocket-Key (expected: 16 bytes, base64)";
            }
        } catch (IllegalArgumentException e) {
            return "malformed Sec-WebSocket-Key (expected: 16 bytes, base64)";
        }
        return null;
    }
}
