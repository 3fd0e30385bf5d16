package io.pushd.server.pipeline;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.pushd.protocol.ErrorCodes;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.auth.Redaction;
import java.nio.charset.StandardCharsets;

/** JSON responses, and how a route answers; errors are {@code {"error":CODE,"message":TEXT}}. */
final class HttpResponses {

    private static final String RETRY_AFTER_SECONDS = "1";

    private HttpResponses() {
    }

    static FullHttpResponse json(HttpResponseStatus status, Object body) {
        byte[] bytes;
        try {
            bytes = ProtocolCodec.mapper().writeValueAsBytes(body);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.wrappedBuffer(bytes));
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
        res.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        HttpUtil.setContentLength(res, bytes.length);
        return res;
    }

    static FullHttpResponse text(HttpResponseStatus status, String body, String contentType) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.wrappedBuffer(bytes));
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        HttpUtil.setContentLength(res, bytes.length);
        return res;
    }

    static FullHttpResponse error(HttpResponseStatus status, String code, String message) {
        var body = ProtocolCodec.mapper().createObjectNode();
        body.put("error", code);
        body.put("message", message);
        return json(status, body);
    }

    /** Writes the response; closes the connection when {@code close} (the request cannot be trusted). */
    static void send(ChannelHandlerContext ctx, FullHttpResponse res, boolean close) {
        if (close) {
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            if (ctx.pipeline().get(HandlerNames.HTTP_KEEPALIVE) != null) {
                // it would close the socket right after this answer, unread input and all (a RST)
                ctx.pipeline().remove(HandlerNames.HTTP_KEEPALIVE);
            }
            ctx.writeAndFlush(res).addListener(done -> {
                if (done.isSuccess()) {
                    LingeringClose.close(ctx.channel()); // FIN, drain, close: no RST overtakes the answer
                } else {
                    ctx.channel().close();
                }
            });
        } else {
            ctx.writeAndFlush(res);
        }
    }

    /** Answers {@code req} at once, keeping the connection open as the request asked; HEAD gets no body. */
    static void reply(ChannelHandlerContext ctx, FullHttpRequest req, FullHttpResponse res) {
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        HttpUtil.setKeepAlive(res, keepAlive);
        if (req.method().equals(HttpMethod.HEAD)) {
            res.content().clear();
        }
        send(ctx, res, !keepAlive);
    }

    /** Runs {@code action} for GET and HEAD, else answers 405. */
    static void onlyGet(ChannelHandlerContext ctx, FullHttpRequest req, Runnable action) {
        if (req.method().equals(HttpMethod.GET) || req.method().equals(HttpMethod.HEAD)) {
            action.run();
        } else {
            methodNotAllowed(ctx, req, "GET", "GET, HEAD");
        }
    }

    /**
     * Answers 405 naming the method the client sent, masked if it looks like a token (a client
     * that put its token in the method's place gets it back nowhere) and shortened.
     */
    static void methodNotAllowed(ChannelHandlerContext ctx, FullHttpRequest req, String expected, String allow) {
        String method = Redaction.text(req.method().name());
        if (method.length() > 32) {
            method = method.substring(0, 32) + "…";
        }
        FullHttpResponse res = error(HttpResponseStatus.METHOD_NOT_ALLOWED, ErrorCodes.METHOD_NOT_ALLOWED,
                method + " not allowed (expected: " + expected + ")");
        res.headers().set(HttpHeaderNames.ALLOW, allow);
        reply(ctx, req, res);
    }

    /** 503 while the server is stopping (or its writer is). */
    static FullHttpResponse notAccepting() {
        return withRetryAfter(error(HttpResponseStatus.SERVICE_UNAVAILABLE, ErrorCodes.NOT_ACCEPTING,
                "the server is not accepting new work; retry later"));
    }

    static FullHttpResponse withRetryAfter(FullHttpResponse res) {
        res.headers().set(HttpHeaderNames.RETRY_AFTER, RETRY_AFTER_SECONDS);
        return res;
    }

    static Object status(String status) {
        return ProtocolCodec.mapper().createObjectNode().put("status", status);
    }

    /** Request text quoted back in an error, cut to a readable length. */
    static String shorten(String s) {
        return s.length() > 60 ? s.substring(0, 60) + "..." : s;
    }
}
