package io.pushd.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.history.TopicRange;
import io.pushd.server.history.LocalSequencer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Heap per topic (store index plus sequencer head), measured after GC. Topics are made by anyone
 * and their heads stay for the epoch, so a topic with nothing kept must cost little.
 * {@code -Dtopics.n=1000000} measures a million.
 */
class TopicMemoryTest {

    static final long T0 = 1_800_000_000_000L;

    @TempDir
    Path dataDir;

    private static long usedHeap() throws InterruptedException {
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    @Test
    void aTopicWithNothingKeptCostsWellUnderThreeHundredBytesOfHeap() throws Exception {
        int n = Integer.getInteger("topics.n", 200_000);
        SetTimeProvider clock = new SetTimeProvider(Instant.ofEpochMilli(T0 + 600_000));
        ChronicleEventStore store = new ChronicleEventStore(dataDir, Duration.ofHours(1), 100_000,
                Duration.ofHours(1), false, clock);
        try {
            LocalSequencer sequencer = new LocalSequencer(store.heads());
            byte[] data = "{}".getBytes(StandardCharsets.UTF_8);
            long before = usedHeap();
            for (int i = 0; i < n; i++) {
                String topic = String.format("topic-%07d", i); // 13 characters
                store.append(topic, sequencer.next(topic), clock.currentTimeMillis(), null, data);
            }
            long withOneEventEach = usedHeap() - before;
            clock.advanceMillis(3 * 3_600_000L);
            store.enforceRetention(); // every event expires: only the heads remain
            long idle = usedHeap() - before;

            System.out.printf("heap per topic (%,d topics): %d B with one kept event, %d B with none%n", n,
                    withOneEventEach / n, idle / n);
            assertThat(store.topicCount()).isEqualTo(n);
            assertThat(store.range("topic-0000007")).isEqualTo(new TopicRange(1, 0));
            // before: ~300 B either way (two long[4] per topic, kept forever); now ~200 B
            assertThat(idle / n).isLessThan(250);
            assertThat(sequencer.next("topic-0000007")).isEqualTo(2);
        } finally {
            store.close();
        }
    }
}
