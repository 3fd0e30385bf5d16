package io.pushd.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameEncoder;
import io.netty.util.ReferenceCountUtil;
import io.pushd.protocol.EventId;
import io.pushd.server.topic.EventFormat;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One event's encoding, and what each subscriber then costs: the old path (the JSON payload, a
 * {@code TextWebSocketFrame} per subscriber through Netty's frame encoder) against whole frames
 * encoded once and written as a pooled duplicate. The channel is an {@code EmbeddedChannel}, so
 * the figures leave out the syscall and the kernel (most of a delivery's cost on loopback).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled"})
@State(Scope.Thread)
public class EncodeBenchmark {

    private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private final byte[] data = ("{\"ts\":1764580000123,\"pad\":\"" + "x".repeat(70) + "\"}").getBytes(StandardCharsets.UTF_8);
    private final EventId id = new EventId("k3x9a0b1", 123_456);
    private EmbeddedChannel framed;
    private EmbeddedChannel raw;
    private ByteBuf sharedJson;
    private ByteBuf sharedFrame;

    @Setup(Level.Trial)
    public void setUp() {
        framed = new EmbeddedChannel(new WebSocket13FrameEncoder(false));
        raw = new EmbeddedChannel();
        sharedJson = EventFormat.JSON.encode(ALLOC, "orders", id, 1_764_580_000_123L, data);
        sharedFrame = EventFormat.WEBSOCKET_FRAME.encode(ALLOC, "orders", id, 1_764_580_000_123L, data);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        sharedJson.release();
        sharedFrame.release();
        framed.finishAndReleaseAll();
        raw.finishAndReleaseAll();
    }

    /** Before: once per event, Jackson's JSON into a direct buffer. */
    @Benchmark
    public int encodeJsonPayload() {
        ByteBuf b = EventFormat.JSON.encode(ALLOC, "orders", id, 1_764_580_000_123L, data);
        int n = b.readableBytes();
        b.release();
        return n;
    }

    /** After: once per event, the whole frame written in place. */
    @Benchmark
    public int encodeWholeFrame() {
        ByteBuf b = EventFormat.WEBSOCKET_FRAME.encode(ALLOC, "orders", id, 1_764_580_000_123L, data);
        int n = b.readableBytes();
        b.release();
        return n;
    }

    /** Before: per subscriber, a frame object through Netty's frame encoder. */
    @Benchmark
    public void perSubscriberFrameThroughEncoder() {
        framed.writeOutbound(new TextWebSocketFrame(sharedJson.retainedDuplicate()));
        drain(framed);
    }

    /** After: per subscriber, a pooled duplicate of the shared frame. */
    @Benchmark
    public void perSubscriberSharedFrame() {
        raw.writeOutbound(sharedFrame.retainedDuplicate());
        drain(raw);
    }

    private static void drain(EmbeddedChannel ch) {
        Object m;
        while ((m = ch.outboundMessages().poll()) != null) {
            ReferenceCountUtil.release(m);
        }
    }
}
