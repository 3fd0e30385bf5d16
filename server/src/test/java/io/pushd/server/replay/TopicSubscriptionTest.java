package io.pushd.server.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.history.EventHistory;
import io.pushd.server.history.TopicRange;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.pipeline.WebSocketSink;
import io.pushd.server.store.ChronicleEventStore;
import io.pushd.server.topic.LiveBatch;
import io.pushd.server.topic.TopicHub;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hand-off rule on an EmbeddedChannel, one step at a time. */
class TopicSubscriptionTest {

    @TempDir
    Path dataDir;
    @TempDir
    Path otherDataDir;
    ChronicleEventStore store;
    TopicHub hub;
    EmbeddedChannel channel;
    final ServerMetrics metrics = new ServerMetrics();
    final SetTimeProvider clock = new SetTimeProvider(1_800_000_000_000L);

    @BeforeEach
    void setUp() {
        store = new ChronicleEventStore(dataDir, Duration.ofHours(24), 1000, Duration.ofHours(24), false, clock);
        hub = new TopicHub(store::epoch, io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, metrics);
        channel = new EmbeddedChannel();
        for (int i = 1; i <= 5; i++) {
            append(i);
        }
    }

    @AfterEach
    void tearDown() {
        assertThat(channel.finishAndReleaseAll()).isFalse(); // every frame was read by the test
        store.close();
    }

    private void append(long seq) {
        store.append("t", seq, clock.currentTimeMillis(), null, ("{\"n\":" + seq + "}").getBytes(StandardCharsets.UTF_8));
    }

    /** A subscription of topic {@code t} on the test channel; a failure is rethrown into the test. */
    private TopicSubscription subscription(EventHistory history) {
        return new TopicSubscription("t", new WebSocketSink(channel, metrics), history, hub, metrics, e -> {
            throw e;
        });
    }

    /** Another store (another epoch) holding {@code {"new":1..events}} of topic {@code t}; the caller closes it. */
    private ChronicleEventStore replacementWith(int events) {
        ChronicleEventStore replacement =
                new ChronicleEventStore(otherDataDir, Duration.ofHours(24), 1000, Duration.ofHours(24), false, clock);
        for (int i = 1; i <= events; i++) {
            replacement.append("t", i, clock.currentTimeMillis(), null, ("{\"new\":" + i + "}").getBytes(StandardCharsets.UTF_8));
        }
        return replacement;
    }

    private ByteBuf liveFrame(long seq) {
        return Unpooled.wrappedBuffer(ProtocolCodec.encodeEvent("t", new EventId(store.epoch(), seq),
                clock.currentTimeMillis(), ("{\"n\":" + seq + "}").getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * Hands {@code event} to the subscription as the hub does, in a batch of its own that lends
     * it, then drops the hub's reference: what the subscription wrote holds one of its own.
     */
    private static void live(TopicSubscription sub, String epoch, long seq, ByteBuf event) {
        LiveBatch batch = new LiveBatch(1);
        batch.add(epoch, seq, event, event.readableBytes());
        try {
            sub.onLive(batch);
        } finally {
            batch.clear();
            event.release();
        }
    }

    /** Hands live frames of {@code seqs} (this store's epoch) to the subscription as one batch; returns them, released by the hub's side. */
    private List<ByteBuf> liveBatch(TopicSubscription sub, long... seqs) {
        LiveBatch batch = new LiveBatch(seqs.length);
        List<ByteBuf> frames = new ArrayList<>();
        for (long seq : seqs) {
            ByteBuf frame = liveFrame(seq);
            frames.add(frame);
            batch.add(store.epoch(), seq, frame, frame.readableBytes());
        }
        try {
            sub.onLive(batch);
        } finally {
            batch.clear();
            frames.forEach(ByteBuf::release);
        }
        return frames;
    }

    /** Every text frame written so far, as {@code type:seq} (or just the type). */
    private List<String> written() throws Exception {
        return written(id -> String.valueOf(EventId.parse(id).seq()));
    }

    /** Every text frame written so far, as {@code type:epoch-seq} (the full id, or just the type). */
    private List<String> writtenIds() throws Exception {
        return written(id -> id);
    }

    /** Every text frame written so far, released, as {@code type:label(id)} (or just the type). */
    private List<String> written(java.util.function.UnaryOperator<String> label) throws Exception {
        channel.runPendingTasks();
        List<String> out = new ArrayList<>();
        Object msg;
        while ((msg = channel.readOutbound()) != null) {
            TextWebSocketFrame f = (TextWebSocketFrame) msg;
            var json = ProtocolCodec.mapper().readTree(f.text());
            f.release();
            assertThat(f.refCnt()).isZero();
            String type = json.path("type").asText();
            out.add(json.has("id") ? type + ":" + label.apply(json.path("id").asText()) : type);
        }
        return out;
    }

    /** A test history that passes epoch, append and range to {@link #target}; reads are each double's own. */
    private abstract static class Delegating implements EventHistory {
        abstract EventHistory target();

        @Override
        public String epoch(String topic) {
            return target().epoch(topic);
        }

        @Override
        public void append(String topic, long seq, long ts, String key, byte[] data) {
            target().append(topic, seq, ts, key, data);
        }

        @Override
        public void sync() {
        }

        @Override
        public TopicRange range(String topic) {
            return target().range(topic);
        }

        @Override
        public long findByIdempotencyKey(String topic, String key) {
            return -1;
        }

        @Override
        public void close() {
        }
    }

    /**
     * The local store's events as one epoch, until {@link #replace} makes them another store's (a
     * shared history that lost the topic's history and started a new epoch). {@link #beforeRead}
     * runs at the start of each read: the moment a replacement can fall between the subscription's
     * look at the epoch and its read.
     */
    private final class ReplacedHistory extends Delegating {
        volatile EventHistory current = store;
        final EventHistory next;
        Runnable beforeRead = () -> { };

        ReplacedHistory(EventHistory next) {
            this.next = next;
        }

        void replace() {
            current = next;
        }

        /** Replaces the history at the start of the next read, once. */
        void replaceAtTheFirstRead() {
            beforeRead = () -> {
                beforeRead = () -> { };
                replace();
            };
        }

        @Override
        EventHistory target() {
            return current;
        }

        @Override
        public int read(String topic, String epoch, long afterSeq, int max, EventVisitor visitor) {
            beforeRead.run();
            return current.read(topic, epoch, afterSeq, max, visitor);
        }

    }

    @Test
    void anEpochThatChangesBetweenTheEpochAndTheReadIsAResetNeverTheNewEventsUnderTheOldEpoch() throws Exception {
        ChronicleEventStore replacement = replacementWith(7);
        try {
            ReplacedHistory history = new ReplacedHistory(replacement);
            history.replaceAtTheFirstRead(); // after the step looked at the epoch, before it reads
            TopicSubscription sub = subscription(history);
            String old = store.epoch();
            String now = replacement.epoch();
            channel.eventLoop().execute(() -> sub.start(new EventId(old, 2)));
            List<String> ids = writtenIds();
            assertThat(ids).doesNotContain("event:" + old + "-3");
            assertThat(ids).containsExactly("subscribed:" + old + "-2", "reset:" + now + "-0", "event:" + now + "-1",
                    "event:" + now + "-2", "event:" + now + "-3", "event:" + now + "-4", "event:" + now + "-5",
                    "event:" + now + "-6", "event:" + now + "-7");
        } finally {
            replacement.close();
        }
    }

    @Test
    void aLiveEventOfTheOldEpochQueuedBehindTheReplayIsDroppedAfterTheResetToTheNewEpoch() throws Exception {
        ChronicleEventStore replacement = replacementWith(5);
        try {
            ReplacedHistory history = new ReplacedHistory(replacement);
            history.replaceAtTheFirstRead();
            TopicSubscription sub = subscription(history);
            String old = store.epoch();
            String now = replacement.epoch();
            channel.eventLoop().execute(() -> sub.start(new EventId(old, 2)));
            assertThat(writtenIds()).containsExactly("subscribed:" + old + "-2", "reset:" + now + "-0",
                    "event:" + now + "-1", "event:" + now + "-2", "event:" + now + "-3", "event:" + now + "-4",
                    "event:" + now + "-5");

            // old-6 was fanned out before the history was replaced, and its delivery queued behind
            // the replay (a coalescing window, a busy loop): it arrives after the reset
            append(6);
            ByteBuf staleSix = liveFrame(6);
            live(sub, old, 6, staleSix);
            assertThat(writtenIds()).as("nothing of the old epoch after the reset").isEmpty();
            assertThat(staleSix.refCnt()).isZero();

            replacement.append("t", 6, clock.currentTimeMillis(), null, "{\"new\":6}".getBytes(StandardCharsets.UTF_8));
            ByteBuf six = Unpooled.wrappedBuffer(ProtocolCodec.encodeEvent("t", new EventId(now, 6),
                    clock.currentTimeMillis(), "{\"new\":6}".getBytes(StandardCharsets.UTF_8)));
            live(sub, now, 6, six);
            assertThat(writtenIds()).containsExactly("event:" + now + "-6");
        } finally {
            replacement.close();
        }
    }

    @Test
    void replaysTheKeptEventsAfterTheIdThenTakesLiveFramesInSequence() throws Exception {
        TopicSubscription sub = subscription(store);
        channel.eventLoop().execute(() -> sub.start(new EventId(store.epoch(), 2)));
        assertThat(written()).containsExactly("subscribed:2", "event:3", "event:4", "event:5");

        append(6);
        ByteBuf six = liveFrame(6);
        live(sub, store.epoch(), 6, six);
        assertThat(written()).containsExactly("event:6");
        assertThat(six.refCnt()).as("the shared frame went out as is and was released by the write").isZero();
    }

    @Test
    void aLiveFrameAlreadySentByTheReplayIsDroppedAndReleased() throws Exception {
        TopicSubscription sub = subscription(store);
        channel.eventLoop().execute(() -> sub.start(new EventId(store.epoch(), 0)));
        assertThat(written()).hasSize(6);

        ByteBuf dup = liveFrame(5);
        live(sub, store.epoch(), 5, dup);
        assertThat(dup.refCnt()).isZero();
        assertThat(written()).isEmpty();
    }

    @Test
    void aLiveFrameAfterAGapIsDroppedAndTheMissingEventsComeFromTheStore() throws Exception {
        TopicSubscription sub = subscription(store);
        channel.eventLoop().execute(() -> sub.start(null)); // live only, at head 5
        assertThat(written()).containsExactly("subscribed:5"); // its id: where a resume would start

        append(6);
        append(7);
        ByteBuf seven = liveFrame(7); // the offer of 6 has not arrived (yet)
        live(sub, store.epoch(), 7, seven);
        assertThat(seven.refCnt()).isZero();
        assertThat(written()).containsExactly("event:6", "event:7");

        ByteBuf lateSix = liveFrame(6);
        live(sub, store.epoch(), 6, lateSix);
        assertThat(lateSix.refCnt()).isZero();
        assertThat(written()).isEmpty();
    }

    @Test
    void aBatchIsWrittenAsOneRunAfterTheDuplicatesAtItsHead() throws Exception {
        TopicSubscription sub = subscription(store);
        channel.eventLoop().execute(() -> sub.start(new EventId(store.epoch(), 2)));
        assertThat(written()).containsExactly("subscribed:2", "event:3", "event:4", "event:5");
        append(6);
        append(7);

        List<ByteBuf> frames = liveBatch(sub, 4, 5, 6, 7); // 4 and 5 the replay sent already

        assertThat(written()).containsExactly("event:6", "event:7");
        assertThat(frames).allSatisfy(f -> assertThat(f.refCnt()).isZero());
        assertThat(sub.isLive()).isTrue();
    }

    @Test
    void aGapInABatchWritesTheRunBeforeItThenTheStoreFillsTheGap() throws Exception {
        TopicSubscription sub = subscription(store);
        channel.eventLoop().execute(() -> sub.start(null)); // live only, at head 5
        assertThat(written()).containsExactly("subscribed:5");
        for (long seq = 6; seq <= 10; seq++) {
            append(seq);
        }

        List<ByteBuf> frames = liveBatch(sub, 6, 7, 9, 10); // 8's offer went missing

        assertThat(written()).as("6 and 7 live, then 8 to 10 from the store; each once")
                .containsExactly("event:6", "event:7", "event:8", "event:9", "event:10");
        assertThat(frames).allSatisfy(f -> assertThat(f.refCnt()).isZero());
        append(11);
        liveBatch(sub, 11);
        assertThat(written()).as("live again after the catch-up").containsExactly("event:11");
    }

    @Test
    void anUnsubscribedTopicReleasesWhateverIsStillOffered() throws Exception {
        TopicSubscription sub = subscription(store);
        channel.eventLoop().execute(() -> sub.start(null));
        assertThat(written()).containsExactly("subscribed:5");
        sub.close();
        assertThat(hub.subscriberCount("t")).isZero();
        append(6);
        ByteBuf six = liveFrame(6);
        live(sub, store.epoch(), 6, six);
        assertThat(six.refCnt()).isZero();
        assertThat(written()).isEmpty();
    }

    /**
     * A history whose events up to 3 are elsewhere (as a cluster node's cold range is in Redis):
     * reads of them answer NOT_AT_HAND and {@link #fetch} completes when the test says.
     */
    private final class RemoteStart extends Delegating {
        final List<CompletableFuture<Fetched>> fetches = new ArrayList<>();
        final List<Long> fetchedAfter = new ArrayList<>();
        CompletableFuture<Void> prepared = CompletableFuture.completedFuture(null);

        @Override
        public CompletionStage<Void> prepare(String topic) {
            return prepared;
        }

        @Override
        EventHistory target() {
            return store;
        }

        @Override
        public int read(String topic, String epoch, long afterSeq, int max, EventVisitor visitor) {
            return afterSeq < 3 ? NOT_AT_HAND : store.read(topic, epoch, afterSeq, max, visitor);
        }

        @Override
        public CompletionStage<Fetched> fetch(String topic, long afterSeq, int max) {
            CompletableFuture<Fetched> f = new CompletableFuture<>();
            fetches.add(f);
            fetchedAfter.add(afterSeq);
            return f;
        }

        /** Completes the last fetch, as Redis would, with events after..3 (from another thread, like Lettuce's). */
        void answer(long after) throws Exception {
            Fetched.Builder b = new Fetched.Builder(4);
            store.read("t", after, (int) (3 - after), b);
            Thread t = new Thread(() -> fetches.get(fetches.size() - 1).complete(b.build(store.epoch(), 3)));
            t.start();
            t.join();
        }

    }

    @Test
    void eventsThatMustBeFetchedAreWrittenBeforeAnyLiveEventAndTheStepsContinueFromTheStore() throws Exception {
        RemoteStart history = new RemoteStart();
        TopicSubscription sub = subscription(history);
        channel.eventLoop().execute(() -> sub.start(new EventId(store.epoch(), 1)));
        assertThat(written()).containsExactly("subscribed:1"); // the replay waits for its page
        assertThat(history.fetchedAfter).containsExactly(1L);

        append(6);
        ByteBuf six = liveFrame(6);
        live(sub, store.epoch(), 6, six);
        assertThat(six.refCnt()).isZero();
        assertThat(written()).isEmpty();
        assertThat(history.fetches).as("one fetch at a time").hasSize(1);

        history.answer(1);
        assertThat(written()).containsExactly("event:2", "event:3", "event:4", "event:5", "event:6");

        append(7);
        ByteBuf seven = liveFrame(7);
        live(sub, store.epoch(), 7, seven);
        assertThat(written()).as("live again after the catch-up").containsExactly("event:7");
    }

    /**
     * A cluster history whose old epoch's events up to 3 are in Redis (fetched), until
     * {@link #replace} makes the topic another store's (Redis lost it; a new epoch).
     */
    private final class ReplacedRemote extends Delegating {
        volatile EventHistory current = store;
        final EventHistory next;
        final List<CompletableFuture<Fetched>> fetches = new ArrayList<>();

        ReplacedRemote(EventHistory next) {
            this.next = next;
        }

        @Override
        EventHistory target() {
            return current;
        }

        void replace() {
            current = next;
        }

        @Override
        public int read(String topic, String epoch, long afterSeq, int max, EventVisitor visitor) {
            return current == store && afterSeq < 3 ? NOT_AT_HAND : current.read(topic, epoch, afterSeq, max, visitor);
        }

        @Override
        public CompletionStage<Fetched> fetch(String topic, long afterSeq, int max) {
            CompletableFuture<Fetched> f = new CompletableFuture<>();
            fetches.add(f);
            return f;
        }
    }

    @Test
    void aPageFetchedForThePositionBeforeAResetToANewEpochIsNotAppliedAfterIt() throws Exception {
        ChronicleEventStore replacement = replacementWith(4);
        try {
            ReplacedRemote history = new ReplacedRemote(replacement);
            TopicSubscription sub = subscription(history);
            String old = store.epoch();
            String now = replacement.epoch();
            channel.eventLoop().execute(() -> sub.start(new EventId(old, 1)));
            assertThat(writtenIds()).containsExactly("subscribed:" + old + "-1"); // its page after 1 is out

            // Redis loses the topic; a live event of the new epoch resets the subscription to its
            // start while the page is on its way
            history.replace();
            ByteBuf four = Unpooled.wrappedBuffer(ProtocolCodec.encodeEvent("t", new EventId(now, 4),
                    clock.currentTimeMillis(), "{\"new\":4}".getBytes(StandardCharsets.UTF_8)));
            live(sub, now, 4, four);
            assertThat(writtenIds()).containsExactly("reset:" + now + "-0");

            // the page comes, as the history fetched it: the new epoch's events after 1
            EventHistory.Fetched.Builder b = new EventHistory.Fetched.Builder(4);
            replacement.read("t", 1, 3, b);
            Thread t = new Thread(() -> history.fetches.get(0).complete(b.build(now, 4)));
            t.start();
            t.join();
            assertThat(writtenIds()).as("from the new epoch's start, not its 2 after the reset (a hole called expired)")
                    .containsExactly("event:" + now + "-1", "event:" + now + "-2", "event:" + now + "-3",
                            "event:" + now + "-4");
        } finally {
            replacement.close();
        }
    }

    @Test
    void aFetchThatFailsEndsTheSubscriptionSoTheSessionCloses() throws Exception {
        RemoteStart history = new RemoteStart();
        List<RuntimeException> failures = new ArrayList<>();
        TopicSubscription sub = new TopicSubscription("t", new WebSocketSink(channel, metrics), history, hub, metrics,
                failures::add);
        channel.eventLoop().execute(() -> sub.start(new EventId(store.epoch(), 0)));
        assertThat(written()).containsExactly("subscribed:0");
        history.fetches.get(0).completeExceptionally(new IllegalStateException("Redis away"));
        assertThat(written()).isEmpty();
        assertThat(failures).singleElement().extracting(Throwable::getMessage).isEqualTo("Redis away");
        assertThat(hub.subscriberCount("t")).isZero();
    }

    @Test
    void whileTheHistoryLoadsTheTopicNothingIsWrittenAndLiveEventsAreReplayedAfterSubscribed() throws Exception {
        RemoteStart history = new RemoteStart();
        history.prepared = new CompletableFuture<>();
        TopicSubscription sub = subscription(history);
        channel.eventLoop().execute(() -> sub.start(new EventId(store.epoch(), 4)));
        assertThat(written()).as("no subscribed before the history knows the head").isEmpty();
        append(6);
        ByteBuf six = liveFrame(6);
        live(sub, store.epoch(), 6, six);
        assertThat(six.refCnt()).isZero();
        assertThat(written()).isEmpty();

        Thread loader = new Thread(() -> history.prepared.complete(null)); // as the applier would
        loader.start();
        loader.join();
        assertThat(written()).containsExactly("subscribed:4", "event:5", "event:6");
    }
}
