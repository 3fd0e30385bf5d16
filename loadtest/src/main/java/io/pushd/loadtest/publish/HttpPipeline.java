package io.pushd.loadtest.publish;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load test's one HTTP engine: a few kept-alive HTTP/1.1 connections to the server on one
 * Netty event loop, each taking a batch of up to {@code depth} pipelined requests (answers come
 * back in request order) and the next batch once all are answered: what a raw-socket filler that
 * writes 64 requests and reads 64 answers did, measured at ~54k publishes/s on two cores. A general HTTP client spends more CPU per request than the server does, so on a small
 * machine it, not the server, would set the pace of a million-event fill (measured: the JDK
 * client ~820 publishes/s, pipelined requests ~63k/s).
 *
 * <p>The server may close a kept-alive connection at any time (idle timeout, maximum connection
 * age, too many pipelined requests, a drain, a crash). Requests written but not answered then are
 * sent again on a fresh connection, at most {@value #MAX_RESENDS} times; a publish's
 * {@code Idempotency-Key} makes that safe (the server answers 200 with the first ID). When no
 * connection can be opened the waiting requests fail with the connect error, and a request not
 * answered within the request timeout fails with {@link HttpTimeoutException}.
 *
 * <p>Thread rules: {@link #send} may be called from any thread; every other method and all state
 * belong to the event loop. Answers complete on the event loop.
 */
final class HttpPipeline implements AutoCloseable {

    /** An answer: status, body and the {@code Retry-After} seconds (-1 when absent). */
    record Answer(int status, String body, long retryAfterSeconds) {
    }

    private static final Logger log = LoggerFactory.getLogger(HttpPipeline.class);
    private static final int MAX_RESENDS = 3;
    private static final int MAX_ANSWER_BYTES = 1 << 20;

    private final String host;
    private final int port;
    private final int depth;
    private final long timeoutNanos;
    /** {@code Bearer <token>} on every request, or null; never logged. */
    private final String authorization;
    private final EventLoopGroup group;
    private final EventLoop loop;
    private final Bootstrap bootstrap;
    private final ArrayDeque<Call> waiting = new ArrayDeque<>();
    private final List<Lane> lanes = new ArrayList<>();
    /** While answers are read, writes wait for the end of the read batch: one flush for many requests. */
    private boolean reading;

    /**
     * @param connections kept-alive connections, opened when first needed
     * @param depth       requests written ahead of their answers on one connection (the server
     *                    queues at most 256 per connection)
     */
    HttpPipeline(String host, int port, int connections, int depth, Duration requestTimeout) {
        this(host, port, connections, depth, requestTimeout, null);
    }

    /** @param bearerToken sent as {@code Authorization: Bearer} on every request; null: none */
    HttpPipeline(String host, int port, int connections, int depth, Duration requestTimeout, String bearerToken) {
        this.authorization = bearerToken == null ? null : "Bearer " + bearerToken;
        this.host = host;
        this.port = port;
        this.depth = depth;
        this.timeoutNanos = requestTimeout.toNanos();
        boolean epoll = Epoll.isAvailable();
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        Class<? extends SocketChannel> type = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        this.group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("push-loadtest-http", true), io);
        this.loop = group.next();
        for (int i = 0; i < connections; i++) {
            lanes.add(new Lane());
        }
        this.bootstrap = new Bootstrap().group(loop).channel(type)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 2_000)
                .remoteAddress(host, port);
        loop.scheduleAtFixedRate(this::expire, 100, 100, TimeUnit.MILLISECONDS);
    }

    /** Sends {@code method path} with a JSON body (or none) and the key (or none). */
    CompletableFuture<Answer> send(HttpMethod method, String path, String idempotencyKey, byte[] body) {
        Call call = new Call(method, path, idempotencyKey, body);
        if (loop.inEventLoop()) {
            enqueue(call);
        } else {
            loop.execute(() -> enqueue(call));
        }
        return call.answer;
    }

    private void enqueue(Call call) {
        waiting.addLast(call);
        dispatch();
    }

    /** Writes waiting requests in batches to idle connections; opens a closed one when all are busy. */
    private void dispatch() {
        while (!waiting.isEmpty()) {
            Lane lane = laneForWrite();
            if (lane == null) {
                lanes.stream().filter(l -> l.channel == null && !l.connecting).findFirst().ifPresent(this::connect);
                break;
            }
            lane.write(waiting.pollFirst());
        }
        if (!reading) {
            lanes.forEach(Lane::flush);
        }
    }

    /**
     * An open connection that takes requests now: one whose batch is being written (not flushed
     * yet), else an idle one; null when every open connection waits for answers.
     */
    private Lane laneForWrite() {
        Lane idle = null;
        for (Lane l : lanes) {
            if (l.channel != null && l.sent.size() < depth) {
                if (l.unflushed) {
                    return l;
                }
                if (idle == null && l.sent.isEmpty()) {
                    idle = l;
                }
            }
        }
        return idle;
    }

    private void connect(Lane lane) {
        lane.connecting = true;
        bootstrap.clone().handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(MAX_ANSWER_BYTES),
                        new AnswerHandler(lane));
            }
        }).connect().addListener((io.netty.channel.ChannelFutureListener) f -> {
            lane.connecting = false;
            if (f.isSuccess()) {
                lane.channel = f.channel(); // before channelActive: the waiting requests go out now
                dispatch();
            } else if (lanes.stream().noneMatch(l -> l.channel != null || l.connecting)) {
                failWaiting(f.cause());
            }
        });
    }

    private void failWaiting(Throwable cause) {
        IOException e = cause instanceof IOException io ? io : new IOException(cause);
        while (!waiting.isEmpty()) {
            waiting.pollFirst().answer.completeExceptionally(e);
        }
    }

    /** A connection closed: its unanswered requests go first in line again, or fail after enough resends. */
    private void closed(Lane lane) {
        lane.channel = null;
        while (!lane.sent.isEmpty()) {
            Call c = lane.sent.pollLast();
            if (++c.resends > MAX_RESENDS) {
                c.answer.completeExceptionally(new IOException("connection closed before the answer, "
                        + MAX_RESENDS + " times"));
            } else {
                waiting.addFirst(c);
            }
        }
        dispatch();
    }

    /** The oldest unanswered request of a connection timed out: it fails, the connection is dropped. */
    private void expire() {
        long now = System.nanoTime();
        for (Lane l : lanes) {
            Call oldest = l.sent.peekFirst();
            if (oldest != null && now - oldest.sentNanos > timeoutNanos) {
                l.sent.pollFirst().answer.completeExceptionally(new HttpTimeoutException(
                        "no answer within " + timeoutNanos / 1_000_000 + " ms"));
                l.channel.close();
            }
        }
    }

    /** Closes the connections and stops the event loop; unanswered requests are abandoned. */
    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /** One request across its sends: the key and body never change. */
    private static final class Call {
        final HttpMethod method;
        final String path;
        final String key;
        final byte[] body;
        final CompletableFuture<Answer> answer = new CompletableFuture<>();
        long sentNanos;
        int resends;

        Call(HttpMethod method, String path, String key, byte[] body) {
            this.method = method;
            this.path = path;
            this.key = key;
            this.body = body;
        }
    }

    /** One connection and the requests written on it, oldest first. */
    private final class Lane {
        final ArrayDeque<Call> sent = new ArrayDeque<>();
        Channel channel;
        boolean connecting;
        boolean unflushed;

        void write(Call c) {
            FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, c.method, c.path,
                    c.body == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(c.body));
            req.headers().set(HttpHeaderNames.HOST, host + ":" + port)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, c.body == null ? 0 : c.body.length);
            if (c.body != null) {
                req.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
            }
            if (c.key != null) {
                req.headers().set("Idempotency-Key", c.key);
            }
            if (authorization != null) {
                req.headers().set(HttpHeaderNames.AUTHORIZATION, authorization);
            }
            c.sentNanos = System.nanoTime();
            sent.addLast(c);
            channel.write(req, channel.voidPromise());
            unflushed = true;
        }

        void flush() {
            if (unflushed && channel != null) {
                unflushed = false;
                channel.flush();
            }
        }
    }

    /** Answers arrive in request order: each completes the oldest request of its connection. */
    private final class AnswerHandler extends SimpleChannelInboundHandler<FullHttpResponse> {
        private final Lane lane;

        AnswerHandler(Lane lane) {
            this.lane = lane;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse res) {
            Call c = lane.sent.pollFirst();
            if (c == null) {
                return; // its request timed out already
            }
            String retryAfter = res.headers().get(HttpHeaderNames.RETRY_AFTER);
            reading = true;
            try {
                c.answer.complete(new Answer(res.status().code(), res.content().toString(StandardCharsets.UTF_8),
                        retryAfter == null ? -1 : parseSeconds(retryAfter)));
                dispatch();
            } finally {
                reading = false;
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            lanes.forEach(Lane::flush);
            ctx.fireChannelReadComplete();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            closed(lane);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.debug("[{}] {}; resending its unanswered requests", ctx.channel().id().asShortText(), cause.toString());
            ctx.close(); // reset or a malformed answer: resent on a fresh connection
        }
    }

    private static long parseSeconds(String v) {
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
