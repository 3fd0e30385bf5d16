package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateHandler;
import io.pushd.protocol.ErrorCodes;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pipeline of {@code server.adminPort}: {@code /metrics}, {@code /healthz} and
 * {@code /readyz}, nothing else. Small on purpose (no WebSocket, no publish, no body): it is
 * for a scraper and a balancer's probes on a private network, so it has no TLS and no token.
 * <pre>
 *   admin-codec      HttpServerCodec
 *   admin-idle       IdleStateHandler     closes a connection silent for limits.httpIdleTimeout
 *   admin-keepalive  HttpServerKeepAliveHandler
 *   admin-aggregator HttpObjectAggregator (bodies up to 1 KiB: none is expected)
 *   admin-api        the three routes, 404 otherwise
 * </pre>
 */
public final class AdminInitializer extends ChannelInitializer<SocketChannel> {

    private static final Logger log = LoggerFactory.getLogger(AdminInitializer.class);
    private static final int MAX_BODY = 1024;

    private final ServerContext server;
    private final StatusRoutes status;

    public AdminInitializer(ServerContext server) {
        this.server = server;
        this.status = new StatusRoutes(server);
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        long idle = server.config().limits().httpIdleTimeout().toMillis();
        ch.pipeline().addLast("admin-codec", new HttpServerCodec(4096, 8192, 8192));
        ch.pipeline().addLast("admin-idle", new IdleStateHandler(0, 0, idle, TimeUnit.MILLISECONDS) {
            @Override
            protected void channelIdle(ChannelHandlerContext ctx, io.netty.handler.timeout.IdleStateEvent evt) {
                ctx.close();
            }
        });
        ch.pipeline().addLast("admin-keepalive", new HttpServerKeepAliveHandler());
        ch.pipeline().addLast("admin-aggregator", new HttpObjectAggregator(MAX_BODY));
        ch.pipeline().addLast("admin-api", new AdminRoutes());
    }

    private final class AdminRoutes extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            if (req.decoderResult().isFailure()) {
                HttpResponses.send(ctx, HttpResponses.error(HttpResponseStatus.BAD_REQUEST, ErrorCodes.BAD_REQUEST,
                        "malformed HTTP request"), true);
                return;
            }
            String path = new QueryStringDecoder(req.uri()).path();
            switch (path) {
                case "/metrics" -> status.metrics(ctx, req);
                case "/healthz" -> status.health(ctx, req);
                case "/readyz" -> status.ready(ctx, req);
                default -> HttpResponses.reply(ctx, req, HttpResponses.error(HttpResponseStatus.NOT_FOUND,
                        ErrorCodes.NOT_FOUND, "no resource at " + HttpResponses.shorten(path)));
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!(cause instanceof IOException)) {
                log.debug("[{}] admin request failed: {}", ctx.channel().id().asShortText(), cause.toString());
            }
            ctx.close();
        }
    }
}
