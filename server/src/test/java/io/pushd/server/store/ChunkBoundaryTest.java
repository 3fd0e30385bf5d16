package io.pushd.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chronicle maps a log file in chunks of 64 MiB (with an overlap): an event that straddles a
 * chunk boundary once made the appender's checksum read-back and the replay's copy read outside
 * the mapping (a JVM crash, SIGSEGV, when a log file first passed 128 MiB; see MappedCopy).
 * Here the chunks are 64 KiB and one hourly file takes 64 MiB of events, so about a thousand
 * events straddle a boundary, some with their header fields across it (those moved the bytes on), and
 * every event is read back through each path: replayed into a direct buffer, copied to the heap,
 * and checked against its checksum by the recovery scan of a restart.
 */
class ChunkBoundaryTest {

    /** Chunks of 64 KiB instead of 64 MiB: the same code at a thousand boundaries instead of two. */
    static final long BLOCK_SIZE = 64 * 1024;
    static final long LOG_BYTES = 64L * 1024 * 1024;

    @TempDir
    Path dataDir;

    final SetTimeProvider clock = new SetTimeProvider(Instant.ofEpochMilli(1_800_000_000_000L + 600_000));

    @Test
    void eventsThatStraddleTheMappedChunksOfALogFileAreWrittenReplayedAndRecoveredWhole() {
        long last;
        ChronicleEventStore store = open();
        try {
            long seq = 0;
            for (long written = 0; written < LOG_BYTES; written += data(seq).length) {
                store.append("t", ++seq, clock.currentTimeMillis(), null, data(seq));
            }
            store.sync();
            last = seq;
            assertReadBackWhole(store, last);
        } finally {
            store.close();
        }

        ChronicleEventStore restarted = open(); // the recovery scan checks every record's checksum
        try {
            assertThat(restarted.recoveredEvents()).as("events recovered").isEqualTo(last);
            assertThat(restarted.range("t").head()).isEqualTo(last);
            assertReadBackWhole(restarted, last);
        } finally {
            restarted.close();
        }
    }

    private ChronicleEventStore open() {
        return new ChronicleEventStore(dataDir, Duration.ofHours(24), 10_000_000, Duration.ofHours(24), false, clock,
                d -> StorageGuard.forDirectory(d, 0), BLOCK_SIZE);
    }

    private static void assertReadBackWhole(ChronicleEventStore store, long last) {
        ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer(1024);
        try {
            long[] next = {1};
            while (next[0] <= last) {
                int n = store.readData("t", store.epoch("t"), next[0] - 1, 256, (seq, ts, data) -> {
                    assertThat(seq).isEqualTo(next[0]);
                    out.clear();
                    data.copyTo(out);
                    byte[] replayed = new byte[out.readableBytes()];
                    out.readBytes(replayed);
                    byte[] expected = data(seq);
                    if (!Arrays.equals(replayed, expected) || !Arrays.equals(data.toBytes(), expected)) {
                        throw new AssertionError("event " + seq + " read back different from what was written");
                    }
                    next[0]++;
                });
                assertThat(n).as("events read after %d", next[0] - 1).isPositive();
            }
        } finally {
            out.release();
        }
    }

    /** 100-1,099 bytes, each event's own content. */
    private static byte[] data(long seq) {
        int size = 100 + (int) ((seq * 7_919) % 1_000);
        byte[] data = new byte[size];
        Arrays.fill(data, (byte) ('a' + seq % 26));
        data[0] = '"';
        data[size - 1] = '"';
        return data;
    }
}
