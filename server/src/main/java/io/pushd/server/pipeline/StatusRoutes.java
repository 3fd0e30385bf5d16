package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.pushd.protocol.ProtocolCodec;

/** {@code /healthz}, {@code /readyz} and {@code /metrics}: answered at once, GET and HEAD only. */
final class StatusRoutes {

    private final ServerContext server;

    StatusRoutes(ServerContext server) {
        this.server = server;
    }

    void health(ChannelHandlerContext ctx, FullHttpRequest req) {
        HttpResponses.onlyGet(ctx, req, () -> HttpResponses.reply(ctx, req,
                HttpResponses.json(HttpResponseStatus.OK, HttpResponses.status("up"))));
    }

    /** 200 while READY (also when the disk is full: subscribers are still served), else 503. */
    void ready(ChannelHandlerContext ctx, FullHttpRequest req) {
        HttpResponses.onlyGet(ctx, req, () -> HttpResponses.reply(ctx, req, server.lifecycle().isReady()
                ? HttpResponses.json(HttpResponseStatus.OK, ProtocolCodec.mapper().createObjectNode()
                        .put("status", "ready")
                        .put("store", server.history().writeState()))
                : HttpResponses.withRetryAfter(HttpResponses.json(HttpResponseStatus.SERVICE_UNAVAILABLE,
                        HttpResponses.status(server.lifecycle().state().readinessName())))));
    }

    void metrics(ChannelHandlerContext ctx, FullHttpRequest req) {
        HttpResponses.onlyGet(ctx, req, () -> HttpResponses.reply(ctx, req, HttpResponses.text(HttpResponseStatus.OK,
                server.metrics().scrape(), "text/plain; version=0.0.4; charset=utf-8")));
    }
}
