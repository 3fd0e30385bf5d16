package io.pushd.server.replay;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameEncoder;
import io.pushd.protocol.EventId;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.pipeline.PushServerInitializer;
import io.pushd.server.pipeline.WebSocketSink;
import io.pushd.server.store.ChronicleEventStore;
import io.pushd.server.store.ScratchDirectory;
import io.pushd.server.topic.TopicHub;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.openhft.chronicle.core.time.SystemTimeProvider;

/**
 * A bounded replay at start-up, before the server says it is ready, so that the replay path is
 * compiled before the reconnecting clients replay on a fresh JVM. Without it the first replay
 * after every restart costs several times the steady state, most of it the JIT compiling the
 * replay path (C1/C2 compiler threads) and the path running in the interpreter or profiled code
 * meanwhile, on the event loops that serve the reconnecting herd.
 *
 * <p>It is the real path, not a copy: a scratch {@link ChronicleEventStore} (its own directory
 * under the data directory, deleted afterwards) holds {@link #EVENTS} events of ~100 bytes, and a
 * {@link TopicSubscription} replays them {@link #ROUNDS} times through a {@link WebSocketSink} on
 * a loopback connection accepted by the server's own transport and event loops, with the
 * handlers every connection has below the frame encoder and the encoder itself in its pipeline;
 * a plain socket reads and drops the frames. So the store's read, the
 * frame encoding and the socket writes are compiled for the classes the clients' connections use
 * (warmed on an {@code EmbeddedChannel}, the compiled code was thrown away as soon as the real
 * channel classes loaded). Nothing of the server's own history, metrics or topics is touched: the
 * store, the hub and the metrics are its own. {@code store.replayWarmup: false} turns it off.
 */
public final class ReplayWarmup {

    /** The scratch store's directory under the data directory (emptied before and deleted after). */
    public static final String DIRECTORY = "replay-warmup";
    static final String TOPIC = "warmup";
    static final int EVENTS = 25_000;
    static final int ROUNDS = 6;
    /**
     * Free disk space (above {@code store.minFreeBytes}) below which the warm-up is skipped: its
     * scratch log takes ~4 MB, and Chronicle maps and writes its files' first chunks and metadata.
     */
    public static final long DISK_BYTES = 64L << 20;
    /** A warm-up that takes longer than this is given up (the start goes on). */
    static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** What a warm-up did, for the start-up log line. */
    public record Result(long replayedEvents, long millis) {
    }

    private ReplayWarmup() {
    }

    /**
     * Runs the warm-up in {@code dataDir}/{@link #DIRECTORY} on {@code group}, over a connection to a
     * throwaway listening socket of {@code serverChannel} on loopback; fails when it cannot.
     */
    public static Result run(Path dataDir, EventLoopGroup group, Class<? extends ServerSocketChannel> serverChannel)
            throws InterruptedException {
        return run(dataDir.resolve(DIRECTORY), group, serverChannel, EVENTS, ROUNDS);
    }

    static Result run(Path dir, EventLoopGroup group, Class<? extends ServerSocketChannel> serverChannel, int events,
                      int rounds) throws InterruptedException {
        long t0 = System.nanoTime();
        ScratchDirectory.delete(dir);
        ChronicleEventStore store = null;
        try {
            store = new ChronicleEventStore(dir, Duration.ofDays(1), events, Duration.ZERO, false,
                    SystemTimeProvider.INSTANCE);
            String pad = "x".repeat(80);
            for (int i = 1; i <= events; i++) {
                byte[] data = ("{\"i\":" + i + ",\"pad\":\"" + pad + "\"}").getBytes(StandardCharsets.US_ASCII);
                store.append(TOPIC, i, System.currentTimeMillis(), null, data);
            }
            ServerMetrics metrics = new ServerMetrics();
            TopicHub hub = new TopicHub(store::epoch, PooledByteBufAllocator.DEFAULT, metrics);
            Replays replays = new Replays(store, hub, metrics, rounds);
            replayOverLoopback(group, serverChannel, replays);
            return new Result((long) rounds * events, (System.nanoTime() - t0) / 1_000_000);
        } finally {
            if (store != null) {
                store.close();
            }
            ScratchDirectory.delete(dir);
        }
    }

    private static void replayOverLoopback(EventLoopGroup group, Class<? extends ServerSocketChannel> serverChannel,
                                           Replays replays) throws InterruptedException {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        Channel listening = new ServerBootstrap().group(group).channel(serverChannel)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        PushServerInitializer.addConnectionHandlers(ch.pipeline());
                        ch.pipeline().addLast(new WebSocket13FrameEncoder(false), replays);
                    }
                })
                .bind(new InetSocketAddress(loopback, 0)).sync().channel();
        Thread reader = null;
        try (SocketChannel client = SocketChannel.open()) {
            // the listening socket stays open until the end: closed now, it could drop the
            // connection before it is accepted
            client.connect(listening.localAddress());
            reader = new Thread(() -> drain(client), "push-replay-warmup-reader");
            reader.setDaemon(true);
            reader.start();
            replays.done.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (IOException e) {
            throw new UncheckedIOException("replay warm-up: cannot connect over loopback", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("replay warm-up: not done after " + TIMEOUT.toMillis() + " ms");
        } finally {
            listening.close().sync();
            if (replays.channel != null) {
                replays.channel.close().sync();
            }
            if (reader != null) {
                reader.join(TIMEOUT.toMillis());
            }
        }
    }

    /** What the frames would be to a client: read and dropped, until the server closes. */
    private static void drain(SocketChannel client) {
        ByteBuffer buf = ByteBuffer.allocateDirect(256 * 1024);
        try {
            while (client.read(buf.clear()) >= 0) {
                // dropped
            }
        } catch (IOException closed) {
            // the warm-up is over
        }
    }

    /**
     * On the accepted connection's event loop: one subscription after another from the start of
     * the scratch topic, each until it is live; the connection's writability resumes a paused one.
     */
    private static final class Replays extends ChannelInboundHandlerAdapter {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        private final ChronicleEventStore store;
        private final TopicHub hub;
        private final ServerMetrics metrics;
        private final int rounds;
        private int round;
        private TopicSubscription sub;
        volatile Channel channel;

        Replays(ChronicleEventStore store, TopicHub hub, ServerMetrics metrics, int rounds) {
            this.store = store;
            this.hub = hub;
            this.metrics = metrics;
            this.rounds = rounds;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            next(ctx);
        }

        private void next(ChannelHandlerContext ctx) {
            if (sub != null) {
                sub.close();
            }
            if (round == rounds) {
                done.complete(null);
                return;
            }
            round++;
            sub = new TopicSubscription(TOPIC, new WebSocketSink(ctx.channel(), metrics), store, hub, metrics,
                    done::completeExceptionally);
            sub.start(new EventId(store.epoch(), 0));
            check(ctx);
        }

        /** The replay runs as tasks on this event loop; look shortly after them whether it reached the head. */
        private void check(ChannelHandlerContext ctx) {
            ctx.executor().schedule(() -> {
                if (done.isDone()) {
                    return;
                }
                if (sub.isLive()) {
                    next(ctx);
                } else {
                    check(ctx);
                }
            }, 200, TimeUnit.MICROSECONDS);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable() && sub != null) {
                sub.onWritable();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (sub != null) {
                sub.close();
            }
            done.completeExceptionally(new IllegalStateException("replay warm-up: the loopback connection closed"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
            ctx.close();
        }
    }
}
