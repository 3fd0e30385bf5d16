package io.pushd.loadtest.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The publish engine against a small Netty HTTP server that closes kept-alive connections like the real one. */
class HttpPipelineTest {

    private final EventLoopGroup serverGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final AtomicInteger connections = new AtomicInteger();
    private final Queue<String> keysSeen = new ConcurrentLinkedQueue<>();
    private Channel server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close().syncUninterruptibly();
        }
        serverGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /**
     * Answers each request 201 with its Idempotency-Key as the body; the {@code closeAfter}-th answer
     * of a connection says {@code Connection: close} and the connection closes, dropping what was
     * pipelined behind it (as the server does at its maximum connection age). 0: never answers.
     */
    private int serve(int closeAfter) {
        server = new ServerBootstrap().group(serverGroup).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.incrementAndGet();
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(65_536),
                                new SimpleChannelInboundHandler<FullHttpRequest>() {
                                    int answered;
                                    boolean closing;

                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
                                        if (closing || closeAfter == 0) {
                                            return;
                                        }
                                        String key = req.headers().get("Idempotency-Key");
                                        keysSeen.add(key);
                                        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                                                HttpResponseStatus.CREATED,
                                                Unpooled.copiedBuffer(key, StandardCharsets.UTF_8));
                                        HttpUtil.setContentLength(res, res.content().readableBytes());
                                        if (++answered == closeAfter) {
                                            closing = true;
                                            HttpUtil.setKeepAlive(res, false);
                                            ctx.writeAndFlush(res).addListener(f -> ctx.close());
                                        } else {
                                            ctx.writeAndFlush(res);
                                        }
                                    }
                                });
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    private static byte[] body() {
        return "{}".getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void requestsUnansweredWhenTheServerClosesAreResentWithTheirKeysOnAFreshConnection() throws Exception {
        int port = serve(3);
        try (HttpPipeline http = new HttpPipeline("127.0.0.1", port, 1, 10, Duration.ofSeconds(5))) {
            List<CompletableFuture<HttpPipeline.Answer>> answers = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                answers.add(http.send(HttpMethod.POST, "/v1/topics/t/events", "k" + i, body()));
            }
            for (int i = 0; i < 10; i++) {
                HttpPipeline.Answer a = answers.get(i).get(5, TimeUnit.SECONDS);
                assertThat(a.status()).isEqualTo(201);
                assertThat(a.body()).as("answer %d", i).isEqualTo("k" + i);
            }
        }
        // 3 answers per connection: k0-k2, k3-k5, k6-k8, k9
        assertThat(connections.get()).isEqualTo(4);
        assertThat(keysSeen).containsExactly("k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9");
    }

    @Test
    void requestsGoOutInBatchesOverSeveralConnections() throws Exception {
        int port = serve(Integer.MAX_VALUE);
        try (HttpPipeline http = new HttpPipeline("127.0.0.1", port, 4, 2, Duration.ofSeconds(5))) {
            List<CompletableFuture<HttpPipeline.Answer>> answers = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                answers.add(http.send(HttpMethod.POST, "/v1/topics/t/events", "k" + i, body()));
            }
            for (CompletableFuture<HttpPipeline.Answer> a : answers) {
                assertThat(a.get(5, TimeUnit.SECONDS).status()).isEqualTo(201);
            }
        }
        assertThat(connections.get()).isBetween(2, 4);
    }

    @Test
    void aServerThatIsDownFailsTheRequestWithTheConnectError() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (HttpPipeline http = new HttpPipeline("127.0.0.1", port, 2, 4, Duration.ofSeconds(5))) {
            CompletableFuture<HttpPipeline.Answer> a = http.send(HttpMethod.GET, "/v1/topics/t", null, null);

            assertThatThrownBy(() -> a.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(IOException.class);
        }
    }

    @Test
    void aRequestNotAnsweredInTimeFailsWithATimeout() throws Exception {
        int port = serve(0);
        try (HttpPipeline http = new HttpPipeline("127.0.0.1", port, 1, 4, Duration.ofMillis(300))) {
            CompletableFuture<HttpPipeline.Answer> a = http.send(HttpMethod.POST, "/v1/topics/t/events", "k", body());

            assertThatThrownBy(() -> a.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(HttpTimeoutException.class);
        }
    }
}
