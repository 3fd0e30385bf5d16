package io.pushd.server.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.DuplexChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameEncoder;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Promise;
import io.netty.util.internal.SystemPropertyUtil;
import io.pushd.protocol.CloseCode;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.topic.EventFormat;
import io.pushd.server.topic.LiveBatch;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Live events written straight to an epoll socket by {@link WebSocketSink#sendLive}, on a real
 * connection: what goes to the socket directly, what goes through Netty, and that the bytes the
 * peer reads are the frames in order either way. The "frames" here are marked byte runs; the
 * sink does not look inside them.
 */
class WebSocketSinkLiveTest {

    final ServerMetrics metrics = new ServerMetrics();
    final EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    final List<ByteBuf> events = new ArrayList<>();
    /** Writes that reached the bottom of the pipeline through Netty (not the direct ones). */
    final AtomicInteger nettyWrites = new AtomicInteger();
    /** Their sizes in bytes. */
    final List<Integer> nettyWriteSizes = new java.util.concurrent.CopyOnWriteArrayList<>();
    Channel listener;
    Channel server;
    Socket client;

    @BeforeEach
    void connect() throws Exception {
        assertThat(Epoll.isAvailable()).as("the direct path is epoll's; Linux has it").isTrue();
        CompletableFuture<Channel> accepted = new CompletableFuture<>();
        listener = new ServerBootstrap().group(loop).channel(EpollServerSocketChannel.class)
                .childOption(ChannelOption.SO_SNDBUF, 4096)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new ChannelOutboundHandlerAdapter() {
                            @Override
                            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                                nettyWrites.incrementAndGet();
                                nettyWriteSizes.add(msg instanceof ByteBuf b ? b.readableBytes() : -1);
                                ctx.write(msg, promise);
                            }
                        });
                        ch.pipeline().addLast(new WebSocket13FrameEncoder(false));
                        accepted.complete(ch);
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        client = new Socket();
        client.setReceiveBufferSize(4096);
        client.connect(listener.localAddress());
        client.setSoTimeout(10_000);
        server = accepted.get(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws Exception {
        client.close();
        listener.close().sync();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        events.forEach(ByteBuf::release);
    }

    /** A direct buffer of {@code length} bytes, all {@code mark}: one "frame". */
    private ByteBuf event(int length, char mark) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(length);
        for (int i = 0; i < length; i++) {
            b.writeByte(mark);
        }
        events.add(b);
        return b;
    }

    /** A direct buffer of {@code length} bytes cycling through the alphabet from {@code first}: a misplaced byte shows. */
    private ByteBuf patterned(int length, char first) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(length);
        b.writeCharSequence(pattern(length, first), StandardCharsets.US_ASCII);
        events.add(b);
        return b;
    }

    private static String pattern(int length, char first) {
        StringBuilder s = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            s.append((char) (first + (i * 7 + i / 26) % 26));
        }
        return s.toString();
    }

    private LiveBatch batch(ByteBuf... frames) {
        LiveBatch batch = new LiveBatch(frames.length);
        for (int i = 0; i < frames.length; i++) {
            batch.add("ep", i + 1, frames[i], frames[i].readableBytes());
        }
        return batch;
    }

    private <T> T onLoop(Callable<T> task) throws Exception {
        return server.eventLoop().submit(task).get(10, TimeUnit.SECONDS);
    }

    private WebSocketSink sink() throws Exception {
        WebSocketSink sink = new WebSocketSink(server, metrics);
        assertThat(onLoop(sink::format)).isEqualTo(EventFormat.WEBSOCKET_FRAME);
        return sink;
    }

    private String read(int bytes) throws Exception {
        InputStream in = client.getInputStream();
        byte[] got = in.readNBytes(bytes);
        assertThat(got).as("bytes before the stream ended").hasSize(bytes);
        return new String(got, StandardCharsets.US_ASCII);
    }

    private long pendingBytes() throws Exception {
        return onLoop(() -> server.unsafe().outboundBuffer().totalPendingWriteBytes());
    }

    @Test
    void aBatchOnAnIdleConnectionGoesStraightToTheSocketInOneWriteNotThroughNetty() throws Exception {
        WebSocketSink sink = sink();
        LiveBatch batch = batch(event(10, 'a'), event(20, 'b'), event(30, 'c'));

        onLoop(() -> {
            sink.sendLive("t", batch, 0, 3);
            return null;
        });

        assertThat(read(60)).isEqualTo("a".repeat(10) + "b".repeat(20) + "c".repeat(30));
        assertThat(nettyWrites).as("no write went down the pipeline").hasValue(0);
        assertThat(events).allSatisfy(e -> assertThat(e.refCnt()).as("no reference taken").isEqualTo(1));
    }

    @Test
    void aBatchTooBigToCopyIntoOneSendIsWrittenFromItsOwnBuffersWhole() throws Exception {
        WebSocketSink sink = sink();
        LiveBatch batch = batch(event(40_000, 'x'), event(30_000, 'y'), event(20, 'z')); // over the 64 KiB copied

        onLoop(() -> {
            sink.sendLive("t", batch, 0, 3);
            return null;
        });

        // whatever the socket took at once, the rest through Netty: the bytes in order, none twice
        assertThat(read(70_020)).isEqualTo("x".repeat(40_000) + "y".repeat(30_000) + "z".repeat(20));
    }

    @Test
    void anotherBatchOrTheSameOneRefilledIsWrittenFromItsOwnEventsNotFromWhatWasPreparedBefore() throws Exception {
        WebSocketSink sink = sink();
        LiveBatch first = batch(event(5, 'a'), event(6, 'b'));
        LiveBatch second = batch(event(7, 'c'), event(8, 'd')); // a new batch object: as many clears as the first

        onLoop(() -> {
            sink.sendLive("t", first, 0, 2);
            sink.sendLive("t", second, 0, 2);
            first.clear();
            first.add("ep", 3, events.get(1), events.get(1).readableBytes()); // b again, then c again
            first.add("ep", 4, events.get(2), events.get(2).readableBytes());
            sink.sendLive("t", first, 0, 2);
            return null;
        });

        assertThat(read(5 + 6 + 7 + 8 + 6 + 7)).isEqualTo("a".repeat(5) + "b".repeat(6) + "c".repeat(7) + "d".repeat(8)
                + "b".repeat(6) + "c".repeat(7));
        assertThat(nettyWrites).hasValue(0);
    }

    @Test
    void aRunInTheMiddleOfABatchWritesOnlyItsEvents() throws Exception {
        WebSocketSink sink = sink();
        LiveBatch batch = batch(event(5, 'a'), event(6, 'b'), event(7, 'c'), event(8, 'd'));

        onLoop(() -> {
            sink.sendLive("t", batch, 1, 3);
            sink.sendLive("t", batch, 3, 4);
            return null;
        });

        assertThat(read(21)).isEqualTo("b".repeat(6) + "c".repeat(7) + "d".repeat(8));
        assertThat(nettyWrites).hasValue(0);
    }

    @Test
    void eventsQueueBehindWhatNettyStillHoldsAndGoOutAfterIt() throws Exception {
        WebSocketSink sink = sink();
        LiveBatch batch = batch(event(10, 'e'));

        onLoop(() -> {
            server.write(Unpooled.copiedBuffer("first", StandardCharsets.US_ASCII)); // queued, not flushed
            sink.sendLive("t", batch, 0, 1);
            return null;
        });

        assertThat(read(15)).isEqualTo("first" + "e".repeat(10));
        assertThat(nettyWrites).as("the message and the event through Netty, in that order").hasValue(2);
        assertThat(onLoop(() -> events.get(0).refCnt())).as("Netty's reference released once written").isEqualTo(1);
    }

    @Test
    void aBatchWithABufferThatHasNoNativeAddressGoesThroughNetty() throws Exception {
        WebSocketSink sink = sink();
        ByteBuf heap = Unpooled.copiedBuffer("h".repeat(8), StandardCharsets.US_ASCII);
        events.add(heap);
        LiveBatch batch = batch(event(4, 'd'), heap);

        onLoop(() -> {
            sink.sendLive("t", batch, 0, 2); // one vector per event is not possible: all through Netty
            sink.sendLive("t", batch, 0, 1); // the direct one alone again, behind them
            return null;
        });

        assertThat(read(16)).isEqualTo("dddd" + "h".repeat(8) + "dddd");
        assertThat(nettyWrites).as("the first two through Netty, flushed at once; the third direct").hasValue(2);
    }

    /** Sends batches the peer does not read until Netty holds bytes; returns what was sent. */
    private String fillTheSocket(WebSocketSink sink) throws Exception {
        StringBuilder expected = new StringBuilder();
        for (int sent = 0; pendingBytes() == 0 && sent < 2_000; sent++) {
            char mark = (char) ('a' + sent % 26);
            char other = Character.toUpperCase(mark);
            LiveBatch batch = batch(event(997, mark), event(1013, other));
            onLoop(() -> {
                sink.sendLive("t", batch, 0, 2);
                return null;
            });
            expected.append(String.valueOf(mark).repeat(997)).append(String.valueOf(other).repeat(1013));
        }
        assertThat(pendingBytes()).as("the socket's buffer filled, Netty holds the rest").isPositive();
        return expected.toString();
    }

    @Test
    void eventsAfterTheSocketFilledQueueBehindWhatNettyHolds() throws Exception {
        WebSocketSink sink = sink();
        String expected = fillTheSocket(sink); // small socket buffers: a few batches
        int viaNetty = nettyWrites.get();
        assertThat(viaNetty).isPositive();

        // another batch while Netty holds bytes: queued behind them, not written ahead
        LiveBatch last = batch(event(50, '#'));
        onLoop(() -> {
            sink.sendLive("t", last, 0, 1);
            return null;
        });

        assertThat(read(expected.length() + 50)).isEqualTo(expected + "#".repeat(50));
        assertThat(nettyWrites.get()).isEqualTo(viaNetty + 1);
    }

    @Test
    void whatTheSocketDoesNotTakeOfAFrameFollowsThroughNettyWithoutATornFrame() throws Exception {
        WebSocketSink sink = sink();
        // far more than the small socket buffers hold: the socket takes part of the first frame
        for (int events : new int[] {1, 2}) { // send(2) for one, writev(2) for several
            nettyWriteSizes.clear();
            LiveBatch batch = events == 1 ? batch(patterned(200_000, 'a'))
                    : batch(patterned(200_000, 'a'), patterned(150_000, 'A'));

            onLoop(() -> {
                sink.sendLive("t", batch, 0, events);
                return null;
            });

            assertThat(nettyWriteSizes).as("the rest of the first frame, as a slice").first()
                    .satisfies(size -> assertThat(size).isStrictlyBetween(0, 200_000));
            String expected = events == 1 ? pattern(200_000, 'a') : pattern(200_000, 'a') + pattern(150_000, 'A');
            assertThat(read(expected.length())).isEqualTo(expected);
            if (events == 2) {
                assertThat(nettyWriteSizes).as("then the second, whole").containsExactly(nettyWriteSizes.get(0), 150_000);
            }
        }
    }

    @Test
    void nothingFollowsOurCloseFrameEvenWhileItWaitsForTheSocket() throws Exception {
        WebSocketSink sink = sink();
        String expected = fillTheSocket(sink);
        LiveBatch batch = batch(event(10, 'x'));

        onLoop(() -> {
            sink.close(CloseCode.GOING_AWAY, "bye"); // queued behind what the peer has not read
            sink.sendLive("t", batch, 0, 1);
            return null;
        });

        ByteArrayOutputStream got = new ByteArrayOutputStream();
        client.getInputStream().transferTo(got); // to the FIN that follows the close frame
        byte[] bytes = got.toByteArray();
        assertThat(bytes).as("the events, then only the close frame: 2 + code + \"bye\"")
                .hasSize(expected.length() + 7);
        assertThat(bytes[expected.length()] & 0xff).as("a close frame").isEqualTo(0x88);
    }

    @Test
    void nothingFollowsOurCloseFrameOnceItWentOutAndTheOutputIsShut() throws Exception {
        WebSocketSink sink = sink();
        LiveBatch batch = batch(event(10, 'x'));

        boolean written = onLoop(() -> {
            sink.close(CloseCode.GOING_AWAY, "bye"); // an idle connection: written at once, then the output shut
            return sink.sendLive("t", batch, 0, 1);
        });

        assertThat(written).isFalse();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        client.getInputStream().transferTo(got);
        assertThat(got.toByteArray()).as("only the close frame: 2 + code + \"bye\"").hasSize(7);
        assertThat(got.toByteArray()[0] & 0xff).isEqualTo(0x88);
        assertThat(onLoop(() -> events.get(0).refCnt())).isEqualTo(1);
    }

    @Test
    void nothingFollowsOurCloseFrameWhenTheCloseComesEightListenerNotificationsDeep() throws Exception {
        WebSocketSink sink = sink();
        LiveBatch batch = batch(event(10, 'x'));
        // Netty runs a listener at once unless it is already this many notifications deep; then it
        // runs from a task, and so would the close frame's listener that shuts the output
        int deepest = Math.min(8, SystemPropertyUtil.getInt("io.netty.defaultPromise.maxListenerStackDepth", 8));
        AtomicReference<Boolean> written = new AtomicReference<>();
        AtomicReference<Boolean> outputShutInTheListener = new AtomicReference<>();

        onLoop(() -> {
            List<Promise<Void>> chain = new ArrayList<>();
            for (int i = 0; i < deepest; i++) {
                chain.add(server.eventLoop().newPromise());
            }
            for (int i = 0; i < deepest - 1; i++) {
                Promise<Void> next = chain.get(i + 1);
                chain.get(i).addListener(f -> next.setSuccess(null));
            }
            chain.get(deepest - 1).addListener(f -> {
                sink.close(CloseCode.GOING_AWAY, "bye"); // an idle connection: the frame is written at once
                outputShutInTheListener.set(((DuplexChannel) server).isOutputShutdown());
                written.set(sink.sendLive("t", batch, 0, 1)); // before the task that would shut the output
            });
            chain.get(0).setSuccess(null);
            return null;
        });

        assertThat(outputShutInTheListener.get()).as("the close frame's listener was deferred (else this tests nothing)")
                .isFalse();
        assertThat(written.get()).isFalse();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        client.getInputStream().transferTo(got);
        assertThat(got.toByteArray()).as("only the close frame: 2 + code + \"bye\"").hasSize(7);
        assertThat(got.toByteArray()[0] & 0xff).isEqualTo(0x88);
    }

    @Test
    void aBatchAfterTheConnectionClosedIsNotWrittenToTheDescriptorItHad() throws Exception {
        WebSocketSink sink = sink();
        LiveBatch batch = batch(event(10, 'z'));
        try (ServerSocket other = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            io.netty.channel.unix.Socket reuser = onLoop(() -> {
                int fd = SocketWrites.socketOf(server).intValue();
                server.close(); // on the loop: the descriptor is closed now, the session hears of it later
                // the lowest free descriptor is the one just closed: a new connection gets it
                io.netty.channel.unix.Socket s = io.netty.channel.unix.Socket.newSocketStream();
                try {
                    assertThat(s.intValue()).as("the new socket reuses the closed one's descriptor").isEqualTo(fd);
                    if (!s.connect(other.getLocalSocketAddress())) {
                        while (!s.finishConnect()) {
                            Thread.sleep(1);
                        }
                    }
                    sink.sendLive("t", batch, 0, 1);
                    return s;
                } catch (Exception | AssertionError e) {
                    s.close();
                    throw e;
                }
            });
            try (Socket peer = other.accept()) {
                peer.setSoTimeout(5_000);
                reuser.close();
                assertThat(peer.getInputStream().read()).as("nothing reached the connection now on that descriptor")
                        .isEqualTo(-1);
            }
        }
        assertThat(onLoop(() -> events.get(0).refCnt())).isEqualTo(1);
    }

    @Test
    void aBatchForASocketThePeerResetClosesTheConnectionAndLeavesTheBatchItsBuffers() throws Exception {
        WebSocketSink sink = sink();
        client.setSoLinger(true, 0);
        LiveBatch batch = batch(event(10, 'r'));

        onLoop(() -> {
            client.close(); // RST, taken by the server's socket at once (loopback), unseen by the loop until this task ends
            assertThat(server.isOpen()).isTrue();
            sink.sendLive("t", batch, 0, 1); // the direct write fails: Netty's write meets the error and closes
            return null;
        });

        assertThat(server.closeFuture().await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(onLoop(() -> events.get(0).refCnt())).as("the batch still owns its buffer, no more").isEqualTo(1);
        assertThat(nettyWrites).as("the event went to Netty after the direct write failed").hasValue(1);
    }

    @Test
    void onlyAPlainEpollConnectionIsWrittenDirectly() throws Exception {
        assertThat(SocketWrites.socketOf(server)).isNotNull();
        assertThat(SocketWrites.socketOf(new EmbeddedChannel())).as("another transport").isNull();
        SSLEngine engine = SSLContext.getDefault().createSSLEngine();
        engine.setUseClientMode(false);
        assertThat(onLoop(() -> {
            server.pipeline().addFirst(new SslHandler(engine));
            return SocketWrites.socketOf(server);
        })).as("TLS").isNull();
    }
}
