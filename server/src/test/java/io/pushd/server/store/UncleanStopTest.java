package io.pushd.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.history.TopicRange;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What survives an unclean stop, and what readers may see before an event is durable. */
class UncleanStopTest {

    @TempDir
    Path dataDir;
    final SetTimeProvider clock = new SetTimeProvider(1_800_000_000_000L);

    @AfterEach
    void clearBoot() {
        System.clearProperty("push.bootId");
    }

    private ChronicleEventStore open(boolean fsync) {
        return new ChronicleEventStore(dataDir, Duration.ofHours(24), 1000, Duration.ofHours(24), fsync, clock);
    }

    private static byte[] json(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Simulates a process that died: the running marker stays behind. */
    private void crashAfter(ChronicleEventStore store) throws Exception {
        String marker = Files.readString(dataDir.resolve("running"));
        store.close();
        Files.writeString(dataDir.resolve("running"), marker);
    }

    @Test
    void withFsyncAnAppendedEventIsInvisibleUntilSynced() {
        try (ChronicleEventStore store = open(true)) {
            store.append("t", 1, clock.currentTimeMillis(), null, json("1"));
            assertThat(store.range("t")).isEqualTo(TopicRange.EMPTY);
            assertThat(store.read("t", 0, 10, (s, ts, d) -> { })).isZero();
            store.sync();
            assertThat(store.range("t")).isEqualTo(new TopicRange(1, 1));
        }
    }

    @Test
    void withoutFsyncAnAppendedEventIsVisibleAtOnce() {
        try (ChronicleEventStore store = open(false)) {
            store.append("t", 1, clock.currentTimeMillis(), null, json("1"));
            assertThat(store.range("t")).isEqualTo(new TopicRange(1, 1));
        }
    }

    @Test
    void aProcessCrashOnTheSameBootKeepsTheHistory() throws Exception {
        System.setProperty("push.bootId", "boot-1");
        ChronicleEventStore first = open(false);
        String epoch = first.epoch();
        first.append("t", 1, clock.currentTimeMillis(), null, json("1"));
        crashAfter(first);
        try (ChronicleEventStore again = open(false)) {
            assertThat(again.epoch()).isEqualTo(epoch);
            assertThat(again.range("t").head()).isEqualTo(1);
        }
    }

    @Test
    void anUncleanStopWithoutFsyncAcrossAMachineRestartStartsANewEpoch() throws Exception {
        System.setProperty("push.bootId", "boot-1");
        ChronicleEventStore first = open(false);
        String epoch = first.epoch();
        first.append("t", 1, clock.currentTimeMillis(), null, json("1"));
        crashAfter(first);
        System.setProperty("push.bootId", "boot-2"); // the machine went down with the process
        try (ChronicleEventStore again = open(false)) {
            assertThat(again.epoch()).isNotEqualTo(epoch);
            assertThat(again.range("t")).isEqualTo(TopicRange.EMPTY);
        }
    }

    @Test
    void anUncleanStopWithFsyncAcrossAMachineRestartKeepsTheHistory() throws Exception {
        System.setProperty("push.bootId", "boot-1");
        ChronicleEventStore first = open(true);
        String epoch = first.epoch();
        first.append("t", 1, clock.currentTimeMillis(), null, json("1"));
        first.sync();
        crashAfter(first);
        System.setProperty("push.bootId", "boot-2");
        try (ChronicleEventStore again = open(true)) {
            assertThat(again.epoch()).isEqualTo(epoch);
            assertThat(again.range("t").head()).isEqualTo(1);
        }
    }

    @Test
    void aCleanStopKeepsTheHistoryWhateverTheBoot() throws Exception {
        System.setProperty("push.bootId", "boot-1");
        ChronicleEventStore first = open(false);
        String epoch = first.epoch();
        first.append("t", 1, clock.currentTimeMillis(), null, json("1"));
        first.close();
        assertThat(dataDir.resolve("running")).doesNotExist();
        System.setProperty("push.bootId", "boot-2");
        try (ChronicleEventStore again = open(false)) {
            assertThat(again.epoch()).isEqualTo(epoch);
        }
    }
}
