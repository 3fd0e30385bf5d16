package io.pushd.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log without Netty's {@code sun.misc.Unsafe}: what a JDK 24 or later gives by default, and
 * {@code -Dio.netty.noUnsafe=true} on any JDK. Netty's memory copy then throws, and it used to sit
 * under the recovery scan and the replay: a restart took an intact log for a damaged one (moved it
 * aside, began a new epoch, reset every client) and every replay failed. Run by the server
 * module's {@code without-netty-unsafe} execution, in a JVM started with that property (this
 * class and {@link ChunkBoundaryTest}); the default execution leaves it out.
 */
class WithoutNettyUnsafeTest {

    @TempDir
    Path dataDir;

    final SetTimeProvider clock = new SetTimeProvider(1_800_000_000_000L);

    @Test
    void thisJvmRunsNettyWithoutUnsafe() {
        assertThat(PlatformDependent.hasUnsafe()).as("Netty's Unsafe, with io.netty.noUnsafe=%s",
                System.getProperty("io.netty.noUnsafe")).isFalse();
    }

    @Test
    void aRestartRecoversTheSameHistoryAndReplaysEveryEventByteForByte() {
        List<byte[]> written = new ArrayList<>();
        String epoch;
        try (ChronicleEventStore store = open()) {
            epoch = store.epoch();
            for (int seq = 1; seq <= 50; seq++) {
                byte[] data = ("{\"n\":" + seq + ",\"pad\":\"" + "x".repeat(seq * 37) + "\"}")
                        .getBytes(StandardCharsets.UTF_8);
                store.append("t", seq, clock.currentTimeMillis(), null, data);
                written.add(data);
            }
            assertThat(replay(store, epoch)).containsExactlyElementsOf(written);
        }

        try (ChronicleEventStore restarted = open()) {
            assertThat(restarted.epoch()).as("the same history, not a new one").isEqualTo(epoch);
            assertThat(restarted.recoveredEvents()).isEqualTo(50);
            assertThat(restarted.range("t").head()).isEqualTo(50);
            assertThat(replay(restarted, epoch)).containsExactlyElementsOf(written);
        }
    }

    private ChronicleEventStore open() {
        return new ChronicleEventStore(dataDir, Duration.ofHours(24), 1000, Duration.ofHours(24), false, clock);
    }

    /** Every event of "t", each read three ways that must agree: into a direct and a heap buffer, and as a copy. */
    private static List<byte[]> replay(ChronicleEventStore store, String epoch) {
        List<byte[]> out = new ArrayList<>();
        ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        ByteBuf heap = PooledByteBufAllocator.DEFAULT.heapBuffer(64);
        try {
            int n = store.readData("t", epoch, 0, 100, (seq, ts, data) -> {
                direct.clear();
                heap.clear();
                data.copyTo(direct);
                data.copyTo(heap);
                byte[] copy = data.toBytes();
                assertThat(ByteBufUtil.getBytes(direct)).as("event %d into a direct buffer", seq).isEqualTo(copy);
                assertThat(ByteBufUtil.getBytes(heap)).as("event %d into a heap buffer", seq).isEqualTo(copy);
                out.add(copy);
            });
            assertThat(n).isEqualTo(out.size());
        } finally {
            direct.release();
            heap.release();
        }
        return out;
    }
}
