package io.pushd.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.history.TopicRange;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A log that lost its end, or whose bytes no longer make sense, is never served as if whole: the
 * numbers after the damage would go to new events, and a client resuming after one would miss
 * what followed without a word. A new history starts (a new epoch: every client gets a reset),
 * and the damaged log is kept aside for the operator.
 */
class LogDamageTest {

    static final long T0 = ChronicleEventStoreTest.T0;
    static final long HOUR = ChronicleEventStoreTest.HOUR;

    @TempDir
    Path dataDir;

    final SetTimeProvider clock = new SetTimeProvider(Instant.ofEpochMilli(T0 + 10 * 60_000));
    final List<ChronicleEventStore> opened = new ArrayList<>();

    @AfterEach
    void closeStores() {
        opened.forEach(ChronicleEventStore::close);
    }

    private ChronicleEventStore open() {
        ChronicleEventStore s = new ChronicleEventStore(dataDir, Duration.ofDays(7), 100_000, Duration.ofHours(1),
                false, clock);
        opened.add(s);
        return s;
    }

    private void closeAll() {
        opened.forEach(ChronicleEventStore::close);
        opened.clear();
    }

    /** {@code n} events of ~150 bytes to topic t, from sequence {@code from}. */
    private void append(ChronicleEventStore store, long from, int n) {
        for (long seq = from; seq < from + n; seq++) {
            byte[] data = ("{\"n\":" + seq + ",\"pad\":\"" + "x".repeat(120) + "\"}").getBytes(StandardCharsets.UTF_8);
            store.append("t", seq, clock.currentTimeMillis(), null, data);
        }
    }

    /** A store of {@code n} events in one log file, closed; its epoch. */
    private String filledAndClosed(int n) {
        ChronicleEventStore store = open();
        String epoch = store.epoch();
        append(store, 1, n);
        closeAll();
        return epoch;
    }

    private List<Path> logFiles() throws IOException {
        try (Stream<Path> files = Files.list(dataDir.resolve("log"))) {
            return files.filter(f -> f.toString().endsWith(".cq4")).sorted(Comparator.naturalOrder()).toList();
        }
    }

    private List<Path> damagedLogs() throws IOException {
        try (Stream<Path> files = Files.list(dataDir)) {
            return files.filter(f -> f.getFileName().toString().startsWith(DataDirectory.DAMAGED_PREFIX)).toList();
        }
    }

    /** The history after a restart on the damaged log: a new epoch with nothing in it, the old log aside. */
    private void assertNewHistory(String epochBefore, long filesAside) throws IOException {
        ChronicleEventStore after = open();
        assertThat(after.epoch()).isNotEqualTo(epochBefore);
        assertThat(after.range("t")).isEqualTo(new TopicRange(0, 0));
        assertThat(after.heads()).isEmpty(); // the sequencer starts the new epoch at 1
        assertThat(damagedLogs()).hasSize(1);
        try (Stream<Path> aside = Files.list(damagedLogs().get(0))) {
            assertThat(aside.filter(f -> f.toString().endsWith(".cq4")).count()).isEqualTo(filesAside);
        }
        append(after, 1, 1);
        closeAll();
        ChronicleEventStore again = open(); // the new history is whole: it is kept
        assertThat(again.epoch()).isEqualTo(after.epoch());
        assertThat(again.range("t")).isEqualTo(new TopicRange(1, 1));
    }

    @Test
    void aLogWhoseNewestFileIsLostStartsANewHistory() throws IOException {
        ChronicleEventStore store = open();
        String epoch = store.epoch();
        append(store, 1, 3);
        clock.advanceMillis(HOUR);
        append(store, 4, 2);
        closeAll();
        List<Path> files = logFiles();
        assertThat(files).hasSize(2);
        Files.delete(files.get(1));

        assertNewHistory(epoch, 1);
    }

    @Test
    void aLogWhoseEveryFileIsLostStartsANewHistory() throws IOException {
        ChronicleEventStore store = open();
        String epoch = store.epoch();
        append(store, 1, 3);
        closeAll();
        for (Path f : logFiles()) {
            Files.delete(f);
        }

        assertNewHistory(epoch, 0);
    }

    @Test
    void anEmptyLogFileStartsANewHistoryAtOnce() throws IOException {
        ChronicleEventStore store = open();
        String epoch = store.epoch();
        append(store, 1, 3);
        closeAll();
        Files.write(logFiles().get(0), new byte[0]);

        long t0 = System.nanoTime();
        assertNewHistory(epoch, 1);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10)); // not Chronicle's 30 s wait
    }

    @Test
    void aLogFileCutShortStartsANewHistory() throws IOException {
        String epoch = filledAndClosed(300);
        Path file = logFiles().get(0);
        long cut = firstDataAfter(file, 25_000) + 7; // inside an event's data
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(cut);
        }

        assertNewHistory(epoch, 1);
    }

    @Test
    void aLogFileWithGarbageInItsMiddleStartsANewHistory() throws IOException {
        String epoch = filledAndClosed(300);
        Path file = logFiles().get(0);
        byte[] garbage = new byte[4096];
        new Random(42).nextBytes(garbage);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(firstDataAfter(file, 20_000));
            raf.write(garbage);
        }

        assertNewHistory(epoch, 1);
    }

    @Test
    void aWholeLogKeepsItsHistoryAcrossRestartsRetentionAndRolls() throws IOException {
        ChronicleEventStore store = open();
        String epoch = store.epoch();
        append(store, 1, 3);
        store.markLogEnd();
        clock.advanceMillis(HOUR);
        append(store, 4, 2);
        store.markLogEnd();
        closeAll();
        store = open();
        assertThat(store.epoch()).isEqualTo(epoch);
        assertThat(store.range("t")).isEqualTo(new TopicRange(5, 1));

        // every file past retention and deleted: the log's end moves back, which is no damage
        clock.advanceMillis(10 * 24 * HOUR);
        store.enforceRetention();
        assertThat(logFiles()).isEmpty();
        closeAll();
        store = open();
        assertThat(store.epoch()).isEqualTo(epoch);
        assertThat(store.heads()).containsEntry("t", 5L); // the sequence goes on from the checkpoint
        assertThat(damagedLogs()).isEmpty();
    }

    @Test
    void aChangedByteInsideAnEventsDataStartsANewHistory() throws IOException {
        // framing intact, data still JSON-looking: only the record's checksum can tell
        String epoch = filledAndClosed(300);
        Path file = logFiles().get(0);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            long at = firstDataAfter(file, 30_000) + 20; // inside the pad of x
            raf.seek(at);
            assertThat(raf.read()).isEqualTo('x');
            raf.seek(at);
            raf.write('y');
        }

        assertNewHistory(epoch, 1);
    }

    @Test
    void recordsWrittenBeforeTheChecksumAreStillRead() throws IOException {
        ChronicleEventStore store = open();
        String epoch = store.epoch();
        append(store, 1, 1);
        closeAll();
        try (net.openhft.chronicle.queue.impl.single.SingleChronicleQueue q =
                     net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder
                             .binary(dataDir.resolve("log").toFile()).rollCycle(ChronicleEventStore.ROLL_CYCLE)
                             .timeProvider(clock).build();
             net.openhft.chronicle.queue.ExcerptAppender a = q.createAppender();
             net.openhft.chronicle.wire.DocumentContext dc = a.writingDocument()) {
            EventRecord.writeUnchecked(dc.wire().bytes(), "t", 2, clock.currentTimeMillis(), null,
                    "{\"old\":true}".getBytes(StandardCharsets.UTF_8));
        }

        ChronicleEventStore after = open();
        assertThat(after.epoch()).isEqualTo(epoch);
        assertThat(after.range("t")).isEqualTo(new TopicRange(2, 1));
        assertThat(damagedLogs()).isEmpty();
    }

    /** The offset of the first '{' (an event's data) at or after {@code from}. */
    private static long firstDataAfter(Path file, long from) throws IOException {
        byte[] all = Files.readAllBytes(file);
        for (int i = (int) from; i < all.length; i++) {
            if (all[i] == '{' && all[i + 1] == '"' && all[i + 2] == 'n') {
                return i;
            }
        }
        throw new IllegalStateException("no event data after " + from + " in " + file);
    }
}
