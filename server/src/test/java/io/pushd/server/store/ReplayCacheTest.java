package io.pushd.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.history.TopicRange;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The replay cache's runs on a real Chronicle Queue: contiguous, one epoch each, never a hole. */
class ReplayCacheTest {

    /** 2027-01-15T08:00:00Z, the start of an hourly cycle. */
    static final long T0 = 1_800_000_000_000L;
    static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;
    final SetTimeProvider clock = new SetTimeProvider(Instant.ofEpochMilli(T0 + 60_000));
    ReplayCache cache;

    @BeforeEach
    void open() {
        cache = ReplayCache.open(dir.resolve("cache"), Duration.ofHours(2), 100, 0, clock);
        assertThat(cache).isNotNull();
    }

    @AfterEach
    void close() {
        cache.close();
    }

    private static byte[] data(long seq) {
        return ("{\"n\":" + seq + "}").getBytes(StandardCharsets.UTF_8);
    }

    private void append(String epoch, long from, long to) {
        for (long s = from; s <= to; s++) {
            assertThat(cache.append("t", epoch, s, clock.currentTimeMillis(), data(s))).isTrue();
        }
    }

    /** The sequences a read after {@code afterSeq} passes (checking each one's data), or null when NOT_HELD. */
    private List<Long> read(String epoch, long afterSeq, int max) {
        List<Long> seqs = new ArrayList<>();
        int n = cache.read("t", epoch, afterSeq, max, (seq, ts, d) -> {
            assertThat(new String(d.toBytes(), StandardCharsets.UTF_8)).isEqualTo(new String(data(seq),
                    StandardCharsets.UTF_8));
            seqs.add(seq);
        });
        if (n == ReplayCache.NOT_HELD) {
            assertThat(seqs).isEmpty();
            return null;
        }
        assertThat(seqs).hasSize(n);
        return seqs;
    }

    @Test
    void servesWhatItHoldsContiguouslyAndNothingBeforeItsFirstOrOfAnotherEpoch() {
        append("e1", 5, 9);
        assertThat(cache.held("t", "e1")).isEqualTo(new TopicRange(9, 5));
        assertThat(read("e1", 4, 10)).containsExactly(5L, 6L, 7L, 8L, 9L);
        assertThat(read("e1", 6, 2)).containsExactly(7L, 8L);
        assertThat(read("e1", 3, 10)).as("event 4 is not held: never skip to 5").isNull();
        assertThat(read("e1", 9, 10)).as("nothing after the last").isNull();
        assertThat(read("e2", 4, 10)).as("another epoch's events are never served").isNull();
    }

    @Test
    void anEventAfterAHoleStartsANewRunAndTheOldOneIsNoLongerServed() {
        append("e1", 1, 5);
        append("e1", 8, 9); // 6 and 7 never reached the cache (a full disk, say)
        assertThat(cache.held("t", "e1")).isEqualTo(new TopicRange(9, 8));
        assertThat(read("e1", 0, 10)).isNull();
        assertThat(read("e1", 7, 10)).containsExactly(8L, 9L);
    }

    @Test
    void anotherEpochReplacesTheRunAndDropForgetsTheTopic() {
        append("e1", 1, 5);
        append("e2", 1, 2);
        assertThat(cache.held("t", "e1")).isEqualTo(TopicRange.EMPTY);
        assertThat(read("e2", 0, 10)).containsExactly(1L, 2L);
        cache.drop("t");
        assertThat(read("e2", 0, 10)).isNull();
    }

    @Test
    void fetchedPagesBelowTheTailFormAColdRunThatIsServedUpToTheTail() {
        append("e1", 101, 110); // what the node applied since it began following
        cache.appendFetched("t", "e1", new long[] {1, 2, 3}, new long[] {T0, T0, T0},
                new byte[][] {data(1), data(2), data(3)});
        cache.appendFetched("t", "e1", new long[] {4, 5}, new long[] {T0, T0}, new byte[][] {data(4), data(5)});
        assertThat(read("e1", 0, 10)).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(read("e1", 5, 10)).as("6..100 were never fetched").isNull();
        assertThat(read("e1", 100, 3)).containsExactly(101L, 102L, 103L);
        cache.appendFetched("t", "e1", new long[] {4, 5, 6}, new long[] {T0, T0, T0},
                new byte[][] {data(4), data(5), data(6)});
        assertThat(read("e1", 3, 10)).as("an overlapping page extends the cold run").containsExactly(4L, 5L, 6L);
        cache.appendFetched("t", "e1", new long[] {110, 111}, new long[] {T0, T0}, new byte[][] {data(110), data(111)});
        assertThat(cache.held("t", "e1")).as("a page that follows the tail extends it").isEqualTo(new TopicRange(111, 101));
    }

    @Test
    void keepsAtMostRetentionCountEventsPerRun() {
        append("e1", 1, 150);
        assertThat(cache.held("t", "e1")).isEqualTo(new TopicRange(150, 51));
        assertThat(read("e1", 49, 10)).isNull();
        assertThat(read("e1", 50, 2)).containsExactly(51L, 52L);
    }

    @Test
    void retentionDeletesHourlyFilesPastTheAgeAndTheRunsLoseWhatWasInThem() throws Exception {
        append("e1", 1, 10);
        clock.currentTimeMillis(T0 + 3 * HOUR + 60_000); // past store.retentionAge (2 h) for the first hour
        append("e1", 11, 12);
        cache.enforceRetention();
        assertThat(cache.held("t", "e1")).isEqualTo(new TopicRange(12, 11));
        assertThat(read("e1", 10, 10)).containsExactly(11L, 12L);
        assertThat(read("e1", 0, 10)).isNull();
        try (var files = Files.list(dir.resolve("cache"))) {
            assertThat(files.filter(p -> p.toString().endsWith(".cq4")).count()).isEqualTo(1);
        }
    }

    @Test
    void startsEmptyWhateverTheLastRunLeft() {
        append("e1", 1, 10);
        cache.close();
        cache = ReplayCache.open(dir.resolve("cache"), Duration.ofHours(2), 100, 0, clock);
        assertThat(cache.held("t", "e1")).isEqualTo(TopicRange.EMPTY);
        append("e1", 11, 11);
        assertThat(read("e1", 10, 10)).containsExactly(11L);
    }

    @Test
    void belowTheFreeSpaceWatermarkItStopsCachingWithoutThrowing() {
        cache.close();
        cache = ReplayCache.open(dir.resolve("cache"), Duration.ofHours(2), 100, Long.MAX_VALUE / 4, clock);
        assertThat(cache.append("t", "e1", 1, T0, data(1))).isFalse();
        assertThat(cache.writable()).isFalse();
        assertThat(read("e1", 0, 10)).isNull();
    }
}
