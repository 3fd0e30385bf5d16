package io.pushd.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pushd.server.history.TopicRange;
import io.pushd.server.history.EventHistory;
import io.pushd.server.history.LocalSequencer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChronicleEventStoreTest {

    /** 2027-01-15T08:00:00Z, the start of an hourly cycle. */
    static final long T0 = 1_800_000_000_000L;
    static final long HOUR = 3_600_000L;

    @TempDir
    Path dataDir;

    final SetTimeProvider clock = new SetTimeProvider(Instant.ofEpochMilli(T0 + 10 * 60_000));
    final List<ChronicleEventStore> opened = new ArrayList<>();

    record Event(long seq, long ts, String data) {
    }

    @AfterEach
    void closeStores() {
        opened.forEach(ChronicleEventStore::close);
    }

    private ChronicleEventStore open(Duration retentionAge, long retentionCount, Duration dedupeWindow) {
        ChronicleEventStore s = new ChronicleEventStore(dataDir, retentionAge, retentionCount, dedupeWindow, false,
                clock);
        opened.add(s);
        return s;
    }

    private ChronicleEventStore open() {
        return open(Duration.ofHours(24), 100_000, Duration.ofHours(24));
    }

    private static byte[] json(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private long now() {
        return clock.currentTimeMillis();
    }

    private static List<Event> readAll(EventHistory store, String topic, long afterSeq) {
        List<Event> out = new ArrayList<>();
        long last = afterSeq;
        while (true) {
            int before = out.size();
            store.read(topic, last, 1000,
                    (seq, ts, data) -> out.add(new Event(seq, ts, new String(data, StandardCharsets.UTF_8))));
            if (out.size() == before) {
                return out;
            }
            last = out.get(out.size() - 1).seq();
        }
    }

    private static List<Long> seqs(List<Event> events) {
        return events.stream().map(Event::seq).toList();
    }

    private long cq4Files() throws IOException {
        try (Stream<Path> files = Files.list(dataDir.resolve("log"))) {
            return files.filter(p -> p.getFileName().toString().endsWith(".cq4")).count();
        }
    }

    private void wipe(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                if (!p.equals(dir)) {
                    Files.delete(p);
                }
            }
        }
    }

    @Test
    void appendedEventsAreReadBackInOrderWithDataIntact() {
        ChronicleEventStore store = open();
        store.append("a", 1, now(), null, json("{\"n\":1}"));
        store.append("b", 1, now() + 1, null, json("[\"b1\"]"));
        store.append("a", 2, now() + 2, "k", json("\"caf\u00e9\""));
        store.append("a", 3, now() + 3, null, json("null"));

        assertThat(readAll(store, "a", 0)).containsExactly(
                new Event(1, now(), "{\"n\":1}"),
                new Event(2, now() + 2, "\"caf\u00e9\""),
                new Event(3, now() + 3, "null"));
        assertThat(readAll(store, "b", 0)).containsExactly(new Event(1, now() + 1, "[\"b1\"]"));
    }

    @Test
    void readStartsAfterTheGivenSequenceAndStopsAtMax() {
        ChronicleEventStore store = open();
        for (long s = 1; s <= 10; s++) {
            store.append("t", s, now(), null, json("{\"n\":" + s + "}"));
        }
        List<Long> got = new ArrayList<>();

        int n = store.read("t", 4, 3, (seq, ts, data) -> got.add(seq));

        assertThat(n).isEqualTo(3);
        assertThat(got).containsExactly(5L, 6L, 7L);
        assertThat(store.read("t", 10, 5, (seq, ts, data) -> got.add(seq))).isZero();
        assertThat(store.read("nobody", 0, 5, (seq, ts, data) -> got.add(seq))).isZero();
    }

    @Test
    void largeEventDataIsStoredIntact() {
        ChronicleEventStore store = open();
        String big = "{\"s\":\"" + "x".repeat(200_000) + "\"}";

        store.append("t", 1, now(), null, json(big));

        assertThat(readAll(store, "t", 0)).extracting(Event::data).containsExactly(big);
    }

    @Test
    void replayReadsCopyEachEventsDataIntactIntoDirectAndHeapBuffers() {
        ChronicleEventStore store = open();
        String big = "{\"s\":\"" + "y".repeat(300_000) + "\"}"; // larger than the scratch array
        store.append("other.topic", 1, now(), "ключ-1", json("{\"o\":1}")); // interleaved, with a non-ASCII key
        store.append("t", 1, now(), null, json("{\"a\":1}"));
        store.append("t", 2, now() + 1, "key-é€", json("{\"b\":\"é\"}"));
        store.append("other.topic", 2, now(), null, json("{\"o\":2}"));
        store.append("t", 3, now() + 2, null, json(big));
        store.append("t", 4, now() + 3, "k", json("[]"));

        for (io.netty.buffer.ByteBuf out : List.of(io.netty.buffer.Unpooled.directBuffer(),
                io.netty.buffer.Unpooled.buffer())) {
            List<Event> got = new ArrayList<>();
            try {
                int n = store.readData("t", store.epoch(), 0, 10, (seq, ts, data) -> {
                    int from = out.writerIndex();
                    data.copyTo(out);
                    got.add(new Event(seq, ts, out.toString(from, data.length(), StandardCharsets.UTF_8)));
                });

                assertThat(n).isEqualTo(4);
                assertThat(got).containsExactly(new Event(1, now(), "{\"a\":1}"),
                        new Event(2, now() + 1, "{\"b\":\"é\"}"), new Event(3, now() + 2, big),
                        new Event(4, now() + 3, "[]"));
            } finally {
                out.release();
            }
        }
    }

    @Test
    void rangeReportsHeadAndOldest() {
        ChronicleEventStore store = open();
        store.append("t", 1, now(), null, json("1"));
        store.append("t", 2, now(), null, json("2"));
        store.append("u", 7, now(), null, json("7"));

        assertThat(store.range("t")).isEqualTo(new TopicRange(2, 1));
        assertThat(store.range("u")).isEqualTo(new TopicRange(7, 7));
        assertThat(store.range("never")).isEqualTo(TopicRange.EMPTY);
        assertThat(store.heads()).containsOnly(
                org.assertj.core.api.Assertions.entry("t", 2L), org.assertj.core.api.Assertions.entry("u", 7L));
    }

    @Test
    void appendWithASequenceNotAfterTheHeadFails() {
        ChronicleEventStore store = open();
        store.append("t", 1, now(), null, json("1"));
        store.append("t", 2, now(), null, json("2"));

        assertThatThrownBy(() -> store.append("t", 2, now(), null, json("x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("head 2");
        assertThatThrownBy(() -> store.append("t", 1, now(), null, json("x")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(store.range("t")).isEqualTo(new TopicRange(2, 1));
        assertThat(readAll(store, "t", 0)).extracting(Event::data).containsExactly("1", "2");
    }

    @Test
    void reopeningRecoversHeadsRangesKeysDataAndEpoch() {
        ChronicleEventStore first = open();
        String epoch = first.epoch();
        first.append("a", 1, now(), "key-1", json("{\"v\":1}"));
        first.append("a", 2, now(), null, json("{\"v\":2}"));
        first.append("b", 1, now(), "key-b", json("{\"v\":3}"));
        first.close();

        ChronicleEventStore second = open();

        assertThat(second.epoch()).isEqualTo(epoch).matches("[0-9a-z]{1,32}");
        assertThat(second.recoveredEvents()).isEqualTo(3);
        assertThat(second.range("a")).isEqualTo(new TopicRange(2, 1));
        assertThat(second.range("b")).isEqualTo(new TopicRange(1, 1));
        assertThat(second.heads()).containsOnlyKeys("a", "b");
        assertThat(second.findByIdempotencyKey("a", "key-1")).isEqualTo(1);
        assertThat(second.findByIdempotencyKey("b", "key-b")).isEqualTo(1);
        assertThat(readAll(second, "a", 0)).extracting(Event::data).containsExactly("{\"v\":1}", "{\"v\":2}");
        second.append("a", 3, now(), null, json("{\"v\":4}"));
        assertThat(second.range("a")).isEqualTo(new TopicRange(3, 1));
    }

    @Test
    void countRetentionKeepsTheNewestEventsOfEachTopic() {
        ChronicleEventStore store = open(Duration.ofHours(24), 5, Duration.ofHours(24));
        for (long s = 1; s <= 12; s++) {
            store.append("busy", s, now(), null, json("{\"n\":" + s + "}"));
        }
        store.append("quiet", 1, now(), null, json("{}"));

        assertThat(store.range("busy")).isEqualTo(new TopicRange(12, 8));
        assertThat(store.range("quiet")).isEqualTo(new TopicRange(1, 1));
        assertThat(seqs(readAll(store, "busy", 0))).containsExactly(8L, 9L, 10L, 11L, 12L);
        assertThat(seqs(readAll(store, "busy", 3))).containsExactly(8L, 9L, 10L, 11L, 12L);
        assertThat(seqs(readAll(store, "busy", 9))).containsExactly(10L, 11L, 12L);
        assertThat(readAll(store, "busy", 10).get(0).data()).isEqualTo("{\"n\":11}");
    }

    @Test
    void countRetentionIsAppliedAgainAfterReopening() {
        ChronicleEventStore first = open(Duration.ofHours(24), 5, Duration.ofHours(24));
        for (long s = 1; s <= 12; s++) {
            first.append("busy", s, now(), null, json("{\"n\":" + s + "}"));
        }
        first.close();

        ChronicleEventStore second = open(Duration.ofHours(24), 5, Duration.ofHours(24));

        assertThat(second.range("busy")).isEqualTo(new TopicRange(12, 8));
        assertThat(seqs(readAll(second, "busy", 0))).containsExactly(8L, 9L, 10L, 11L, 12L);
    }

    @Test
    void ageRetentionDeletesExpiredHourlyFiles() throws IOException {
        ChronicleEventStore store = open(Duration.ofHours(1), 100_000, Duration.ofHours(1));
        for (long s = 1; s <= 3; s++) {
            store.append("t", s, now(), null, json("{\"n\":" + s + "}"));
        }
        assertThat(cq4Files()).isEqualTo(1);
        clock.advanceMillis(3 * HOUR);
        store.append("t", 4, now(), null, json("{\"n\":4}"));
        assertThat(cq4Files()).isEqualTo(2);

        store.enforceRetention();

        assertThat(cq4Files()).isEqualTo(1);
        assertThat(store.logFileCount()).isEqualTo(1);
        assertThat(store.range("t")).isEqualTo(new TopicRange(4, 4));
        assertThat(seqs(readAll(store, "t", 0))).containsExactly(4L);
        assertThat(seqs(readAll(store, "t", 1))).containsExactly(4L);
        assertThat(Files.exists(dataDir.resolve("heads.properties"))).isTrue();
    }

    @Test
    void aSecondStoreOnTheSameDataDirectoryIsRefusedAndTheFirstKeepsServing() {
        ChronicleEventStore first = open();
        first.append("t", 1, now(), null, json("1"));
        // Two stores on one directory would hand the same sequences to different events.
        assertThatThrownBy(this::open).isInstanceOf(DataDirectoryInUseException.class)
                .hasMessageContaining("data directory " + dataDir + " is in use by another server")
                .hasMessageContaining("(pid " + ProcessHandle.current().pid() + ")");
        first.append("t", 2, now(), null, json("2"));
        assertThat(seqs(readAll(first, "t", 0))).containsExactly(1L, 2L);
        first.close();
        ChronicleEventStore next = open(); // closing gave the directory back
        assertThat(seqs(readAll(next, "t", 0))).containsExactly(1L, 2L);
    }

    @Test
    void aStoreThatCannotOpenSaysWhichFileIsCorruptAndGivesTheDirectoryBack() throws IOException {
        open().append("t", 1, now(), null, json("1"));
        opened.remove(0).close();
        Files.writeString(dataDir.resolve("heads.properties"), "t=notanumber\n");
        assertThatThrownBy(this::open).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("heads.properties is corrupt: topic t has head notanumber");
        Files.writeString(dataDir.resolve("heads.properties"), "t=1\n");
        assertThat(seqs(readAll(open(), "t", 0))).containsExactly(1L); // not left locked by the failed open
    }

    @Test
    void ageRetentionKeepsFilesYoungerThanTheRetentionAge() throws IOException {
        ChronicleEventStore store = open(Duration.ofHours(2), 100_000, Duration.ofHours(1));
        store.append("t", 1, now(), null, json("1"));
        clock.advanceMillis(HOUR);
        store.append("t", 2, now(), null, json("2"));

        store.enforceRetention();

        assertThat(cq4Files()).isEqualTo(2);
        assertThat(store.range("t")).isEqualTo(new TopicRange(2, 1));
        assertThat(seqs(readAll(store, "t", 0))).containsExactly(1L, 2L);
    }

    @Test
    void filesNoKeptEventRefersToAreDeletedBeforeTheyAreOld() throws IOException {
        ChronicleEventStore store = open(Duration.ofHours(24), 2, Duration.ofHours(1));
        store.append("t", 1, now(), null, json("1"));
        store.append("t", 2, now(), null, json("2"));
        clock.advanceMillis(HOUR);
        store.append("t", 3, now(), null, json("3"));
        store.append("t", 4, now(), null, json("4"));

        store.enforceRetention();

        assertThat(cq4Files()).isEqualTo(1);
        assertThat(seqs(readAll(store, "t", 0))).containsExactly(3L, 4L);
    }

    @Test
    void eventsKeptAfterRetentionAreStillReadableAfterReopening() {
        ChronicleEventStore first = open(Duration.ofHours(1), 100_000, Duration.ofHours(1));
        first.append("t", 1, now(), null, json("1"));
        clock.advanceMillis(3 * HOUR);
        first.append("t", 2, now(), null, json("2"));
        first.append("t", 3, now(), null, json("3"));
        first.enforceRetention(); // deletes hour 0 and writes the heads checkpoint (t=3)
        assertThat(first.range("t")).isEqualTo(new TopicRange(3, 2));
        first.close();

        ChronicleEventStore second = open(Duration.ofHours(1), 100_000, Duration.ofHours(1));

        assertThat(second.range("t")).isEqualTo(new TopicRange(3, 2));
        assertThat(readAll(second, "t", 0)).extracting(Event::data).containsExactly("2", "3");
    }

    @Test
    void headSurvivesWhenRetentionDeletedEveryEventOfATopic() {
        ChronicleEventStore first = open(Duration.ofHours(1), 100_000, Duration.ofHours(1));
        for (long s = 1; s <= 3; s++) {
            first.append("gone", s, now(), null, json("1"));
        }
        clock.advanceMillis(3 * HOUR);
        first.append("other", 1, now(), null, json("1"));
        first.enforceRetention();
        assertThat(first.range("gone")).isEqualTo(new TopicRange(3, 0));
        first.close();

        ChronicleEventStore second = open(Duration.ofHours(1), 100_000, Duration.ofHours(1));

        assertThat(second.range("gone").head()).isEqualTo(3);
        assertThat(second.range("gone").hasKeptEvents()).isFalse();
        assertThat(readAll(second, "gone", 0)).isEmpty();
        LocalSequencer sequencer = new LocalSequencer(second.heads());
        long next = sequencer.next("gone");
        assertThat(next).isEqualTo(4);
        second.append("gone", next, now(), null, json("4"));
        assertThat(second.range("gone")).isEqualTo(new TopicRange(4, 4));
    }

    @Test
    void retentionOnAnIdleStoreDeletesTheOldFileAndLaterAppendsStillWork() throws IOException {
        ChronicleEventStore first = open(Duration.ofHours(1), 100_000, Duration.ofHours(1));
        first.append("t", 1, now(), null, json("1"));
        clock.advanceMillis(3 * HOUR);

        first.enforceRetention(); // no append since: the only file is the appender's last cycle

        assertThat(cq4Files()).isZero();
        assertThat(first.range("t")).isEqualTo(new TopicRange(1, 0));
        first.append("t", 2, now(), null, json("2"));
        assertThat(seqs(readAll(first, "t", 0))).containsExactly(2L);
        first.close();

        ChronicleEventStore second = open(Duration.ofHours(1), 100_000, Duration.ofHours(1));
        assertThat(second.range("t")).isEqualTo(new TopicRange(2, 2));
        assertThat(seqs(readAll(second, "t", 0))).containsExactly(2L);
    }

    @Test
    void wipedDataDirectoryStartsANewEpochWithNoHistory() throws IOException {
        ChronicleEventStore first = open();
        String oldEpoch = first.epoch();
        first.append("t", 1, now(), null, json("1"));
        first.close();
        wipe(dataDir);

        ChronicleEventStore second = open();

        assertThat(second.epoch()).isNotEqualTo(oldEpoch);
        assertThat(second.range("t")).isEqualTo(TopicRange.EMPTY);
        assertThat(second.heads()).isEmpty();
    }

    @Test
    void logWithoutAnEpochFileStartsANewEpochWithEmptyHistory() throws IOException {
        ChronicleEventStore first = open();
        String oldEpoch = first.epoch();
        first.append("t", 1, now(), "k", json("1"));
        first.append("t", 2, now(), null, json("2"));
        first.close();
        Files.delete(dataDir.resolve("epoch"));

        ChronicleEventStore second = open();

        assertThat(second.epoch()).isNotEqualTo(oldEpoch);
        assertThat(second.recoveredEvents()).isZero();
        assertThat(second.range("t")).isEqualTo(TopicRange.EMPTY);
        assertThat(second.heads()).isEmpty();
        assertThat(second.findByIdempotencyKey("t", "k")).isEqualTo(-1);
        assertThat(readAll(second, "t", 0)).isEmpty();
        assertThat(Files.readString(dataDir.resolve("epoch")).trim()).isEqualTo(second.epoch());
    }

    @Test
    void corruptEpochFileRefusesToOpen() throws IOException {
        Files.writeString(dataDir.resolve("epoch"), "Not An Epoch!");

        assertThatThrownBy(() -> open()).isInstanceOf(IllegalStateException.class).hasMessageContaining("epoch");
    }

    @Test
    void tenThousandTopicsShareOneQueue() throws IOException {
        ChronicleEventStore store = open();
        for (int round = 1; round <= 3; round++) {
            for (int t = 0; t < 10_000; t++) {
                store.append("topic-" + t, round, now(), null, json("{\"t\":" + t + ",\"r\":" + round + "}"));
            }
        }

        assertThat(cq4Files()).isLessThanOrEqualTo(2);
        assertThat(store.heads()).hasSize(10_000);
        for (int t : new int[] {0, 1, 4_999, 7_777, 9_999}) {
            assertThat(store.range("topic-" + t)).isEqualTo(new TopicRange(3, 1));
            assertThat(readAll(store, "topic-" + t, 1)).extracting(Event::data)
                    .containsExactly("{\"t\":" + t + ",\"r\":2}", "{\"t\":" + t + ",\"r\":3}");
        }
    }

    @Test
    void idempotencyKeyIsFoundWithinTheDedupeWindowOnly() {
        ChronicleEventStore store = open(Duration.ofHours(24), 100_000, Duration.ofMinutes(10));
        store.append("t", 1, now(), "k1", json("1"));
        store.append("t", 2, now(), null, json("2"));

        assertThat(store.findByIdempotencyKey("t", "k1")).isEqualTo(1);
        assertThat(store.findByIdempotencyKey("other", "k1")).isEqualTo(-1);
        assertThat(store.findByIdempotencyKey("t", "k2")).isEqualTo(-1);

        clock.advanceMillis(9 * 60_000);
        assertThat(store.findByIdempotencyKey("t", "k1")).isEqualTo(1);

        clock.advanceMillis(2 * 60_000);
        assertThat(store.findByIdempotencyKey("t", "k1")).isEqualTo(-1);
    }

    @Test
    void expiredIdempotencyKeysAreNotRecoveredOnReopen() {
        ChronicleEventStore first = open(Duration.ofHours(24), 100_000, Duration.ofMinutes(10));
        first.append("t", 1, now(), "old", json("1"));
        clock.advanceMillis(20 * 60_000);
        first.append("t", 2, now(), "new", json("2"));
        first.close();

        ChronicleEventStore second = open(Duration.ofHours(24), 100_000, Duration.ofMinutes(10));

        assertThat(second.findByIdempotencyKey("t", "old")).isEqualTo(-1);
        assertThat(second.findByIdempotencyKey("t", "new")).isEqualTo(2);
    }

    @Test
    void aKeyInsideTheDedupeWindowSurvivesARestartAfterRetentionDeletedItsEventsFile() {
        // count retention (1 per topic) lets the hour-0 file go long before the 24 h window ends
        ChronicleEventStore first = open(Duration.ofHours(24), 1, Duration.ofHours(24));
        first.append("t", 1, now(), "k1", json("1"));
        clock.advanceMillis(2 * HOUR);
        first.append("t", 2, now(), "k2", json("2"));
        first.enforceRetention(); // deletes hour 0: the only file holding k1's event
        assertThat(first.range("t").oldest()).isEqualTo(2);
        assertThat(first.findByIdempotencyKey("t", "k1")).isEqualTo(1);
        first.close();

        ChronicleEventStore second = open(Duration.ofHours(24), 1, Duration.ofHours(24));
        assertThat(second.findByIdempotencyKey("t", "k1")).as("the retry gets its original ID").isEqualTo(1);
        assertThat(second.findByIdempotencyKey("t", "k2")).isEqualTo(2);
        second.close();

        clock.advanceMillis(23 * HOUR); // k1's window is over, k2's is not
        ChronicleEventStore third = open(Duration.ofHours(24), 1, Duration.ofHours(24));
        assertThat(third.findByIdempotencyKey("t", "k1")).isEqualTo(-1);
        assertThat(third.findByIdempotencyKey("t", "k2")).isEqualTo(2);
    }

    @Test
    void aSavedKeysFileCutShortStillOpensAndKeepsTheLogsOwnKeys() throws IOException {
        ChronicleEventStore first = open(Duration.ofHours(24), 1, Duration.ofHours(24));
        first.append("t", 1, now(), "k1", json("1"));
        clock.advanceMillis(2 * HOUR);
        first.append("t", 2, now(), "k2", json("2"));
        first.enforceRetention();
        first.close();
        Path keys = dataDir.resolve(DataDirectory.KEYS);
        byte[] whole = Files.readAllBytes(keys);
        Files.write(keys, java.util.Arrays.copyOf(whole, whole.length - 3)); // inside the last key

        ChronicleEventStore second = open(Duration.ofHours(24), 1, Duration.ofHours(24));
        assertThat(second.findByIdempotencyKey("t", "k2")).as("from the log").isEqualTo(2);
        assertThat(second.range("t").head()).isEqualTo(2);
    }

    @Test
    void savedKeysOfAnotherHistoryAreNotTaken() throws IOException {
        ChronicleEventStore first = open(Duration.ofHours(24), 1, Duration.ofHours(24));
        first.append("t", 1, now(), "k1", json("1"));
        clock.advanceMillis(2 * HOUR);
        first.append("t", 2, now(), null, json("2"));
        first.enforceRetention();
        first.close();
        assertThat(dataDir.resolve(DataDirectory.KEYS)).exists();
        byte[] saved = Files.readAllBytes(dataDir.resolve(DataDirectory.KEYS));
        wipe(dataDir);
        ChronicleEventStore fresh = open(Duration.ofHours(24), 1, Duration.ofHours(24)); // a new epoch
        fresh.close();
        Files.write(dataDir.resolve(DataDirectory.KEYS), saved);

        ChronicleEventStore second = open(Duration.ofHours(24), 1, Duration.ofHours(24));
        assertThat(second.findByIdempotencyKey("t", "k1")).as("k1 names an event of the old history").isEqualTo(-1);
    }

    @Test
    void readsAfterCloseReturnNothing() {
        ChronicleEventStore store = open();
        store.append("t", 1, now(), null, json("1"));

        store.close();

        assertThat(store.read("t", 0, 10, (seq, ts, data) -> { })).isZero();
    }

    @Test
    void fsyncStoreAppendsAndSyncs() {
        ChronicleEventStore store = new ChronicleEventStore(dataDir, Duration.ofHours(1), 10, Duration.ofHours(1),
                true, clock);
        opened.add(store);
        store.append("t", 1, now(), null, json("1"));

        store.sync();

        assertThat(seqs(readAll(store, "t", 0))).containsExactly(1L);
        assertThat(store.diskBytes()).isPositive();
    }
}
