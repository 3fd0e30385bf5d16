package io.pushd.client.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * A scripted WebSocket server for behaviour a real server does not show on demand: dropping a
 * connection before its {@code subscribed} frames, or going silent. The script gets the
 * connection's number (1, 2, ...) and its channel right after the handshake.
 */
public final class FakeServer implements AutoCloseable {

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    public final List<String> requestUris = new CopyOnWriteArrayList<>();
    public final List<InetSocketAddress> peers = new CopyOnWriteArrayList<>();

    public FakeServer(BiConsumer<Integer, Channel> script) throws InterruptedException {
        WebSocketServerProtocolConfig ws = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath("/v1/live").checkStartsWith(true).build();
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(8192),
                                new WebSocketServerProtocolHandler(ws), new ChannelInboundHandlerAdapter() {
                                    @Override
                                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete hc) {
                                            peers.add((InetSocketAddress) ctx.channel().remoteAddress());
                                            requestUris.add(hc.requestUri());
                                            script.accept(requestUris.size(), ctx.channel());
                                        }
                                    }

                                    @Override
                                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                        ReferenceCountUtil.release(msg);
                                    }
                                });
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    public int connections() {
        return requestUris.size();
    }

    public static void send(Channel ch, String json) {
        ch.writeAndFlush(new TextWebSocketFrame(json));
    }

    public static void subscribed(Channel ch, String topic) {
        send(ch, "{\"type\":\"subscribed\",\"topic\":\"" + topic + "\",\"head\":null,\"oldest\":null}");
    }

    public static void close(Channel ch, int code, String reason) {
        ch.writeAndFlush(new CloseWebSocketFrame(code, reason));
    }

    @Override
    public void close() {
        server.close().awaitUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
    }
}
