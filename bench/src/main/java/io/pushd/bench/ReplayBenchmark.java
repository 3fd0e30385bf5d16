package io.pushd.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.pushd.protocol.EventId;
import io.pushd.server.store.ChronicleEventStore;
import io.pushd.server.topic.EventFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import net.openhft.chronicle.core.time.SystemTimeProvider;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Replay from the Chronicle store, per event, 64 events per read (as {@code TopicSubscription}
 * does): the old path (a {@code byte[]} per event, Jackson's JSON, one buffer per event) against
 * the store's bytes appended as whole frames into one buffer per read.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Dchronicle.analytics.disable=true", "-Dio.netty.leakDetection.level=disabled",
        "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED", "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED", "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
        "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
        "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED"})
@State(Scope.Thread)
public class ReplayBenchmark {

    static final int EVENTS = 20_000;
    static final int STEP = 64;
    /** Events per store read in a replay (TopicSubscription.REPLAY_READ). */
    static final int READ = 256;
    private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private Path dir;
    private ChronicleEventStore store;
    private String epoch;
    private long after;
    private long afterRead;
    private EventFormat.ReplayAppender appender;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("replay-bench");
        store = new ChronicleEventStore(dir, Duration.ofDays(1), 10_000_000, Duration.ofMinutes(1), false,
                SystemTimeProvider.INSTANCE);
        for (int i = 1; i <= EVENTS; i++) {
            byte[] data = ("{\"i\":" + i + ",\"pad\":\"" + "x".repeat(70) + "\"}").getBytes(StandardCharsets.UTF_8);
            store.append("orders", i, System.currentTimeMillis(), null, data);
        }
        store.sync();
        epoch = store.epoch("orders");
        appender = EventFormat.WEBSOCKET_FRAME.appender("orders", epoch);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        store.close();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private long next() {
        long a = after;
        after = after + STEP >= EVENTS ? 0 : after + STEP;
        return a;
    }

    /** Before: per event a byte[], the JSON through Jackson and a buffer of its own. */
    @Benchmark
    @OperationsPerInvocation(STEP)
    public int perEventJson() {
        int[] bytes = {0};
        store.read("orders", next(), STEP, (seq, ts, data) -> {
            ByteBuf b = EventFormat.JSON.encode(ALLOC, "orders", new EventId(epoch, seq), ts, data);
            bytes[0] += b.readableBytes();
            b.release();
        });
        return bytes[0];
    }

    /** After: the store's bytes appended as whole frames, one buffer per read. */
    @Benchmark
    @OperationsPerInvocation(STEP)
    public int wholeFramesInOneBuffer() {
        ByteBuf out = ALLOC.directBuffer(STEP * 160);
        store.readData("orders", epoch, next(), STEP,
                (seq, ts, data) -> EventFormat.WEBSOCKET_FRAME.append(out, "orders", epoch, seq, ts, data));
        int n = out.readableBytes();
        out.release();
        return n;
    }

    /** What a replay runs: the topic's appender (the per-topic prefix encoded once), 256 events per read. */
    @Benchmark
    @OperationsPerInvocation(READ)
    public int replayAppender() {
        ByteBuf out = ALLOC.directBuffer(READ * 160);
        store.readData("orders", epoch, nextRead(), READ, (seq, ts, data) -> appender.append(out, seq, ts, data));
        int n = out.readableBytes();
        out.release();
        return n;
    }

    /** Only the store's read, for the share of it in {@link #replayAppender}. */
    @Benchmark
    @OperationsPerInvocation(READ)
    public long readOnly() {
        long[] sum = {0};
        store.readData("orders", epoch, nextRead(), READ, (seq, ts, data) -> sum[0] += seq + data.length());
        return sum[0];
    }

    private long nextRead() {
        long a = afterRead;
        afterRead = afterRead + READ >= EVENTS ? 0 : afterRead + READ;
        return a;
    }
}
