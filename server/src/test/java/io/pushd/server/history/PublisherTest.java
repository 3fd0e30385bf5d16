package io.pushd.server.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.UnpooledByteBufAllocator;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.store.ChronicleEventStore;
import io.pushd.server.store.StorageFullException;
import io.pushd.server.topic.InlineSubscriber;
import io.pushd.server.topic.TopicHub;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PublisherTest {

    @TempDir
    Path dataDir;

    final SetTimeProvider clock = new SetTimeProvider(Instant.ofEpochMilli(1_800_000_000_000L));
    ChronicleEventStore store;
    final ServerMetrics metrics = new ServerMetrics();
    TopicHub hub;
    Publisher publisher;

    @BeforeEach
    void start() {
        store = new ChronicleEventStore(dataDir, Duration.ofHours(24), 100_000, Duration.ofHours(24), false, clock);
        hub = new TopicHub(store::epoch, UnpooledByteBufAllocator.DEFAULT, metrics);
        publisher = new Publisher(store, new LocalSequencer(store.heads()), hub, metrics, clock::currentTimeMillis, 4096);
    }

    @AfterEach
    void stop() throws Exception {
        publisher.close();
        store.close();
    }

    private static byte[] json(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Publisher.Result await(CompletableFuture<Publisher.Result> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    private Map<Long, String> stored(String topic) {
        Map<Long, String> out = new HashMap<>();
        long last = 0;
        while (true) {
            List<Long> batch = new ArrayList<>();
            store.read(topic, last, 1000, (seq, ts, data) -> {
                batch.add(seq);
                out.put(seq, new String(data, StandardCharsets.UTF_8));
            });
            if (batch.isEmpty()) {
                return out;
            }
            last = batch.get(batch.size() - 1);
        }
    }

    /** Whether the store can append at once, as the publisher with callers running asks it. */
    volatile boolean storeAppendsAtOnce = true;

    /** Replaces the publisher with one whose publishing threads run their publish when the writer is idle. */
    private void letCallersRun() throws InterruptedException {
        publisher.close();
        publisher = new Publisher(store, new LocalSequencer(store.heads()), hub, metrics, clock::currentTimeMillis,
                4096, () -> storeAppendsAtOnce);
    }

    private void awaitIdleWriter() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!publisher.idle() && System.nanoTime() < deadline) { // the writer has just started
            Thread.sleep(1);
        }
    }

    /** The thread each publish of {@code topic} was fanned out on. */
    private List<String> fanOutThreads(String topic) {
        List<String> threads = new CopyOnWriteArrayList<>();
        hub.subscribe(topic, new InlineSubscriber((seq, frame) -> {
            threads.add(Thread.currentThread().getName());
            frame.release();
        }));
        return threads;
    }

    @Test
    void concurrentPublishesGetConsecutiveSequencesPerTopic() throws Exception {
        publishConcurrentlyAndCheckTheSequences();
    }

    @Test
    void concurrentPublishesRunByTheirOwnThreadsOrTheWriterGetConsecutiveSequencesPerTopicToo() throws Exception {
        letCallersRun();
        publishConcurrentlyAndCheckTheSequences();
    }

    @Test
    void aPublishToAnIdleWriterIsStoredAnsweredAndFannedOutOnTheCallersThreadWhenCallersRun() throws Exception {
        letCallersRun();
        List<String> deliveredOn = fanOutThreads("t");
        awaitIdleWriter();

        CompletableFuture<Publisher.Result> answer = publisher.publish("t", json("{\"v\":1}"), null);

        assertThat(answer).as("answered before publish returned").isCompletedWithValue(new Publisher.Result(1, true));
        assertThat(stored("t")).containsExactly(Map.entry(1L, "{\"v\":1}"));
        assertThat(deliveredOn).containsExactly(Thread.currentThread().getName());
    }

    @Test
    void anEventLargerThanTheInlineBoundOrAStoreThatCannotAppendAtOnceLeavesThePublishToTheWriter() throws Exception {
        letCallersRun();
        List<String> deliveredOn = fanOutThreads("t");
        String large = "\"" + "x".repeat(Publisher.INLINE_MAX_BYTES) + "\"";
        awaitIdleWriter();
        assertThat(await(publisher.publish("t", json(large), null))).isEqualTo(new Publisher.Result(1, true));
        storeAppendsAtOnce = false; // the disk full: each append probes it
        awaitIdleWriter();
        assertThat(await(publisher.publish("t", json("2"), null))).isEqualTo(new Publisher.Result(2, true));
        storeAppendsAtOnce = true;
        awaitIdleWriter();
        assertThat(await(publisher.publish("t", json("3"), null))).isEqualTo(new Publisher.Result(3, true));

        assertThat(deliveredOn).containsExactly("push-writer", "push-writer", Thread.currentThread().getName());
        assertThat(stored("t")).containsEntry(1L, large).containsEntry(2L, "2").containsEntry(3L, "3");
    }

    @Test
    void aPublishMadeOnTheThreadRunningABatchFromInsideItIsQueuedNotNestedInIt() throws Exception {
        letCallersRun();
        CompletableFuture<CompletableFuture<Publisher.Result>> echo = new CompletableFuture<>();
        hub.subscribe("n", new InlineSubscriber((seq, frame) -> { // delivered inside the batch's fan-out
            frame.release();
            if (seq == 1) {
                echo.complete(publisher.publish("n", json("2"), null));
            }
        }));
        awaitIdleWriter();

        Publisher.Result first = await(publisher.publish("n", json("1"), null));

        assertThat(first).isEqualTo(new Publisher.Result(1, true));
        assertThat(await(echo.get(30, TimeUnit.SECONDS))).isEqualTo(new Publisher.Result(2, true));
        assertThat(stored("n")).containsExactly(Map.entry(1L, "1"), Map.entry(2L, "2"));
    }

    @Test
    void withoutCallersRunningAPublishIsAnsweredByTheWriterThread() throws Exception {
        // The writer is held in the fan-out of an earlier event, so the answer cannot come before
        // the callback is attached: on a future already done it would run on this thread (seen
        // under CI load, when the writer was quicker than the thenRun).
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        hub.subscribe("gate", new InlineSubscriber((seq, frame) -> {
            frame.release();
            held.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        publisher.publish("gate", json("0"), null);
        assertThat(held.await(30, TimeUnit.SECONDS)).as("the writer in the gate's fan-out").isTrue();

        CompletableFuture<Publisher.Result> answer = publisher.publish("t", json("1"), null);
        assertThat(answer).as("queued behind the held batch, not run here").isNotDone();
        List<String> answeredOn = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> recorded = answer.thenRun(() -> answeredOn.add(Thread.currentThread().getName()));
        release.countDown();

        recorded.get(30, TimeUnit.SECONDS);
        assertThat(answeredOn).containsExactly("push-writer");
        assertThat(await(answer)).isEqualTo(new Publisher.Result(1, true));
    }

    @Test
    void callersRunningIsRefusedForASequencerThatStoresEvents() {
        Sequencer remote = new Sequencer() { // a shared one: each batch a round trip that also stores
            @Override
            public java.util.concurrent.CompletionStage<Numbers> reserve(List<String> topics) {
                return new CompletableFuture<>();
            }

            @Override
            public boolean storesEvents() {
                return true;
            }
        };
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Publisher(store, remote, hub, metrics,
                        clock::currentTimeMillis, 64, () -> true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("waits on the network");
    }

    private void publishConcurrentlyAndCheckTheSequences() throws Exception {
        String[] topics = {"t0", "t1", "t2"};
        int threads = 4;
        int perThread = 500;
        List<Long> liveOrder = new CopyOnWriteArrayList<>();
        hub.subscribe("t0", new InlineSubscriber((seq, frame) -> {
            liveOrder.add(seq);
            frame.release();
        }));
        record Sent(int thread, int i, String topic, CompletableFuture<Publisher.Result> result) {
        }
        List<List<Sent>> sentByThread = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            List<Sent> mine = new ArrayList<>();
            sentByThread.add(mine);
            Thread w = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    String topic = topics[(i + thread) % topics.length];
                    mine.add(new Sent(thread, i, topic,
                            publisher.publish(topic, json("{\"th\":" + thread + ",\"i\":" + i + "}"), null)));
                }
            });
            workers.add(w);
            w.start();
        }
        go.countDown();
        for (Thread w : workers) {
            w.join();
        }

        Map<String, List<Long>> seqsByTopic = new HashMap<>();
        for (List<Sent> mine : sentByThread) {
            assertThat(mine).hasSize(perThread);
            Map<String, Long> lastPerTopic = new HashMap<>();
            for (Sent s : mine) {
                Publisher.Result r = await(s.result());
                assertThat(r.created()).isTrue();
                seqsByTopic.computeIfAbsent(s.topic(), k -> new ArrayList<>()).add(r.seq());
                // one thread's publishes to a topic are sequenced in the order it made them
                assertThat(r.seq()).isGreaterThan(lastPerTopic.getOrDefault(s.topic(), 0L));
                lastPerTopic.put(s.topic(), r.seq());
            }
        }
        int total = 0;
        for (String topic : topics) {
            List<Long> seqs = seqsByTopic.get(topic);
            int n = seqs.size();
            total += n;
            assertThat(seqs).doesNotHaveDuplicates();
            assertThat(seqs).containsExactlyInAnyOrderElementsOf(
                    java.util.stream.LongStream.rangeClosed(1, n).boxed().toList());
            assertThat(store.range(topic)).isEqualTo(new TopicRange(n, 1));
            assertThat(stored(topic)).hasSize(n);
        }
        assertThat(total).isEqualTo(threads * perThread);
        // each stored event is the data of the publish that was given its sequence
        for (List<Sent> mine : sentByThread) {
            for (Sent s : mine) {
                assertThat(stored(s.topic()).get(s.result().get().seq()))
                        .isEqualTo("{\"th\":" + s.thread() + ",\"i\":" + s.i() + "}");
            }
        }
        // live subscribers see the topic's events in sequence order, each once
        publisher.runOnWriter(() -> { }).get(30, TimeUnit.SECONDS);
        assertThat(liveOrder).isEqualTo(
                java.util.stream.LongStream.rangeClosed(1, seqsByTopic.get("t0").size()).boxed().toList());
    }

    @Test
    void repeatedIdempotencyKeyReturnsTheOriginalSequenceAndStoresNothing() throws Exception {
        Publisher.Result first = await(publisher.publish("t", json("{\"v\":1}"), "key-1"));
        Publisher.Result retry = await(publisher.publish("t", json("{\"v\":\"different\"}"), "key-1"));

        assertThat(first).isEqualTo(new Publisher.Result(1, true));
        assertThat(retry).isEqualTo(new Publisher.Result(1, false));
        assertThat(store.range("t")).isEqualTo(new TopicRange(1, 1));
        assertThat(stored("t")).containsExactly(Map.entry(1L, "{\"v\":1}"));
    }

    @Test
    void idempotencyKeysAreScopedToTheTopic() throws Exception {
        await(publisher.publish("a", json("1"), "k"));
        await(publisher.publish("a", json("2"), null));

        Publisher.Result other = await(publisher.publish("b", json("3"), "k"));

        assertThat(other).isEqualTo(new Publisher.Result(1, true));
        assertThat(store.range("a").head()).isEqualTo(2);
    }

    @Test
    void sameKeyPublishedTwiceAtOnceIsStoredOnce() throws Exception {
        CompletableFuture<Publisher.Result> a = publisher.publish("t", json("1"), "same");
        CompletableFuture<Publisher.Result> b = publisher.publish("t", json("1"), "same");

        assertThat(await(a).seq()).isEqualTo(await(b).seq()).isEqualTo(1);
        assertThat(List.of(await(a).created(), await(b).created())).containsExactlyInAnyOrder(true, false);
        assertThat(store.range("t").head()).isEqualTo(1);
    }

    @Test
    void publishesQueuedBeforeCloseAreStillStored() throws Exception {
        List<CompletableFuture<Publisher.Result>> queued = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            queued.add(publisher.publish("t", json(Integer.toString(i)), null));
        }

        publisher.close();

        for (CompletableFuture<Publisher.Result> f : queued) {
            assertThat(f).isCompleted();
            assertThat(f.get().created()).isTrue();
        }
        assertThat(store.range("t")).isEqualTo(new TopicRange(200, 1));
    }

    /** The real store, except that appends are refused for want of space while {@code full} is set. */
    static final class FillableStore implements EventHistory {
        final EventHistory real;
        volatile boolean full;
        /** sync() fails (a disk error under store.fsync) while set. */
        volatile boolean syncFails;

        FillableStore(EventHistory real) {
            this.real = real;
        }

        @Override
        public void append(String topic, long seq, long ts, String key, byte[] data) {
            if (full) {
                throw new StorageFullException("no room on disk for the event");
            }
            real.append(topic, seq, ts, key, data);
        }

        @Override
        public String epoch(String topic) {
            return real.epoch(topic);
        }

        @Override
        public void sync() {
            if (syncFails) {
                throw new java.io.UncheckedIOException(new java.io.IOException("msync: input/output error"));
            }
            real.sync();
        }

        @Override
        public TopicRange range(String topic) {
            return real.range(topic);
        }

        @Override
        public long findByIdempotencyKey(String topic, String key) {
            return real.findByIdempotencyKey(topic, key);
        }

        @Override
        public int read(String topic, String epoch, long afterSeq, int max, EventVisitor visitor) {
            return real.read(topic, epoch, afterSeq, max, visitor);
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aBatchWhoseSyncFailsIsAnsweredMayBeStoredAndARetryWithItsKeyGetsTheOriginalNumberOnceSynced()
            throws Exception {
        ChronicleEventStore durable = new ChronicleEventStore(dataDir.resolve("fsync"), Duration.ofHours(24), 100_000,
                Duration.ofHours(24), true, clock);
        FillableStore flaky = new FillableStore(durable);
        TopicHub durableHub = new TopicHub(durable::epoch, UnpooledByteBufAllocator.DEFAULT, metrics);
        Publisher p = new Publisher(flaky, new LocalSequencer(durable.heads()), durableHub, metrics,
                clock::currentTimeMillis, 64);
        try {
            flaky.syncFails = true;
            assertThat(p.publish("s", json("1"), "k1")).failsWithin(Duration.ofSeconds(30))
                    .withThrowableOfType(ExecutionException.class).havingCause().isInstanceOf(NotDurableException.class);
            // the retry finds the key, but its original is still not durable: not acknowledged either
            assertThat(p.publish("s", json("1"), "k1")).failsWithin(Duration.ofSeconds(30))
                    .withThrowableOfType(ExecutionException.class).havingCause().isInstanceOf(NotDurableException.class);
            assertThat(durable.range("s").head()).as("nothing visible before a sync succeeded").isZero();
            flaky.syncFails = false;
            assertThat(await(p.publish("s", json("1"), "k1"))).isEqualTo(new Publisher.Result(1, false));
            assertThat(await(p.publish("s", json("2"), null)).seq()).isEqualTo(2);
            assertThat(durable.range("s")).isEqualTo(new TopicRange(2, 1));
        } finally {
            p.close();
            durable.close();
        }
    }

    @Test
    void aPublishRefusedForStorageBurnsNoSequenceNumberAndIsCounted() throws Exception {
        FillableStore fillable = new FillableStore(store);
        Publisher p = new Publisher(fillable, new LocalSequencer(store.heads()), hub, metrics,
                clock::currentTimeMillis, 64);
        try {
            assertThat(await(p.publish("s", json("1"), null)).seq()).isEqualTo(1);
            fillable.full = true;
            for (int i = 0; i < 3; i++) {
                CompletableFuture<Publisher.Result> refused = p.publish("s", json("\"refused\""), "k" + i);
                assertThat(refused).failsWithin(Duration.ofSeconds(30)).withThrowableOfType(ExecutionException.class)
                        .havingCause().isInstanceOf(StorageFullException.class);
            }
            fillable.full = false;
            assertThat(await(p.publish("s", json("2"), null)).seq()).as("the number the refused ones would have had")
                    .isEqualTo(2);
            assertThat(await(p.publish("s", json("3"), "k0")))
                    .as("an Idempotency-Key of a refused publish was not remembered")
                    .isEqualTo(new Publisher.Result(3, true));
            assertThat(stored("s")).containsExactly(Map.entry(1L, "1"), Map.entry(2L, "2"), Map.entry(3L, "3"));
            assertThat(metrics.scrape()).contains("push_store_refused_publishes_total 3.0");
        } finally {
            p.close();
        }
    }

    @Test
    void aSequencerThatAnswersLaterOnAnotherThreadNumbersEveryPublishInOrderOncePerBatch() throws Exception {
        LocalSequencer counter = new LocalSequencer(store.heads());
        ExecutorService remote = Executors.newSingleThreadExecutor();
        List<Integer> reserved = new CopyOnWriteArrayList<>();
        Sequencer oneRoundTripPerBatch = topics -> {
            reserved.add(topics.size());
            return CompletableFuture.supplyAsync(() -> {
                LockSupport.parkNanos(5_000_000); // the round trip
                return counter;
            }, remote);
        };
        Publisher p = new Publisher(store, oneRoundTripPerBatch, hub, metrics, clock::currentTimeMillis, 4096);
        try {
            List<CompletableFuture<Publisher.Result>> sent = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                sent.add(p.publish("r", json(Integer.toString(i)), null));
            }
            for (int i = 0; i < sent.size(); i++) {
                assertThat(await(sent.get(i))).isEqualTo(new Publisher.Result(i + 1, true));
            }
            assertThat(stored("r")).hasSize(200).containsEntry(200L, "199");
            assertThat(reserved.stream().mapToInt(Integer::intValue).sum()).isEqualTo(200);
            assertThat(reserved.size()).as("publishes queued during a round trip share the next one").isLessThan(200);
        } finally {
            p.close();
            remote.shutdownNow();
        }
    }

    @Test
    void publishAfterCloseIsRejected() throws Exception {
        publisher.close();

        CompletableFuture<Publisher.Result> f = publisher.publish("t", json("1"), null);

        assertThat(f).isCompletedExceptionally();
        ExecutionException e = org.assertj.core.api.Assertions.catchThrowableOfType(ExecutionException.class,
                f::get);
        assertThat(e.getCause()).isInstanceOf(RejectedExecutionException.class).hasMessageContaining("closed");
        assertThat(store.range("t")).isEqualTo(TopicRange.EMPTY);
    }

    @Test
    void fullQueueRejectsAtOnce() throws Exception {
        Publisher tiny = new Publisher(store, new LocalSequencer(store.heads()), hub, metrics, clock::currentTimeMillis, 1);
        CountDownLatch release = new CountDownLatch(1);
        try {
            // park the writer so nothing is taken from the queue
            CompletableFuture<Void> parked = tiny.runOnWriter(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            List<CompletableFuture<Publisher.Result>> fs = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                fs.add(tiny.publish("q", json("1"), null));
            }
            assertThat(fs).anySatisfy(f -> {
                assertThat(f).isCompletedExceptionally();
                assertThat(f).failsWithin(Duration.ZERO).withThrowableOfType(ExecutionException.class)
                        .havingCause().isInstanceOf(RejectedExecutionException.class)
                        .withMessageContaining("full");
            });
            release.countDown();
            parked.get(30, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            tiny.close();
        }
    }
}
