package io.pushd.server.pipeline;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.pushd.protocol.ProtocolCodec;
import java.nio.charset.StandardCharsets;

/** JSON responses; errors are {@code {"error":CODE,"message":TEXT}}. */
final class HttpResponses {

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
            ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.writeAndFlush(res);
        }
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
