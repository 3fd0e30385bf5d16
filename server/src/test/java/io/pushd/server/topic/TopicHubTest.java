package io.pushd.server.topic;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.metrics.ServerMetrics;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TopicHubTest {

    /** Hands out plain unpooled buffers and remembers every one, so tests can see what was allocated. */
    static final class RecordingAllocator extends AbstractByteBufAllocator {
        final List<ByteBuf> direct = new ArrayList<>();
        final List<ByteBuf> heap = new ArrayList<>();

        RecordingAllocator() {
            super(true);
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf b = new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
            heap.add(b);
            return b;
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf b = new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
            direct.add(b);
            return b;
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }
    }

    /** Keeps every frame it is offered, unreleased, until the test releases it. */
    static final class Keeper implements TopicHub.Subscriber {
        final List<Long> seqs = new ArrayList<>();
        final List<String> epochs = new ArrayList<>();
        final List<ByteBuf> frames = new ArrayList<>();
        final EventFormat format;

        Keeper() {
            this(EventFormat.JSON);
        }

        Keeper(EventFormat format) {
            this.format = format;
        }

        @Override
        public EventFormat format() {
            return format;
        }

        @Override
        public io.netty.util.concurrent.EventExecutor executor() {
            return io.netty.util.concurrent.ImmediateEventExecutor.INSTANCE;
        }

        @Override
        public void onLive(LiveBatch events) {
            for (int i = 0; i < events.size(); i++) {
                seqs.add(events.seq(i));
                epochs.add(events.epoch(i));
                frames.add(events.event(i).retainedDuplicate()); // kept past the call: a reference of its own
            }
        }

        void releaseAll() {
            frames.forEach(ByteBuf::release);
            frames.clear();
        }
    }

    final RecordingAllocator alloc = new RecordingAllocator();
    final TopicHub hub = new TopicHub(topic -> "ep1", alloc, new ServerMetrics());
    final List<Keeper> keepers = new ArrayList<>();

    private Keeper keeper(String topic) {
        Keeper k = new Keeper();
        keepers.add(k);
        hub.subscribe(topic, k);
        return k;
    }

    @AfterEach
    void releaseLeftovers() {
        keepers.forEach(Keeper::releaseAll);
    }

    /** Follows {@link ByteBuf#unwrap()} (duplicates, leak-detector wrappers) down to {@code target} if it is there. */
    private static ByteBuf underlying(ByteBuf frame, ByteBuf target) {
        ByteBuf b = frame;
        while (b != null && b != target) {
            b = b.unwrap();
        }
        return b;
    }

    private static JsonNode parse(ByteBuf frame) throws Exception {
        return ProtocolCodec.mapper().readTree(frame.toString(StandardCharsets.UTF_8));
    }

    @Test
    void eachEventReachesTheSubscriberWithTheEpochItsIdWasEncodedWith() throws Exception {
        String[] epoch = {"ep1"};
        TopicHub replaced = new TopicHub(topic -> epoch[0], alloc, new ServerMetrics());
        Keeper k = new Keeper();
        keepers.add(k);
        replaced.subscribe("t", k);
        replaced.fanOut("t", 6, 1, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());
        epoch[0] = "ep2"; // the topic's history replaced between two fan-outs
        replaced.fanOut("t", 1, 2, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());

        assertThat(k.epochs).containsExactly("ep1", "ep2");
        assertThat(parse(k.frames.get(0)).path("id").asText()).isEqualTo("ep1-6");
        assertThat(parse(k.frames.get(1)).path("id").asText()).isEqualTo("ep2-1");
    }

    @Test
    void eventIsEncodedOnceIntoOneDirectBufferSharedByEverySubscriber() {
        Keeper a = keeper("t");
        Keeper b = keeper("t");
        Keeper c = keeper("t");

        hub.fanOut("t", 7, 1234, "{\"n\":1}".getBytes(StandardCharsets.UTF_8), System.nanoTime());

        assertThat(alloc.direct).hasSize(1);
        assertThat(alloc.heap).isEmpty();
        ByteBuf shared = alloc.direct.get(0);
        assertThat(shared.isDirect()).isTrue();
        List<ByteBuf> frames = List.of(a.frames.get(0), b.frames.get(0), c.frames.get(0));
        // each subscriber has its own view object...
        assertThat(frames.get(0)).isNotSameAs(frames.get(1)).isNotSameAs(frames.get(2));
        assertThat(frames.get(1)).isNotSameAs(frames.get(2));
        // ...of the very buffer that was allocated, holding one reference of it
        assertThat(frames).allSatisfy(f -> assertThat(underlying(f, shared)).isSameAs(shared));
        assertThat(shared.refCnt()).isEqualTo(3);
        if (shared.hasMemoryAddress()) {
            assertThat(frames).allSatisfy(f -> assertThat(f.memoryAddress()).isEqualTo(shared.memoryAddress()));
        }
        // same memory: a change to the shared buffer shows through every view
        byte first = shared.getByte(0);
        shared.setByte(0, 'X');
        assertThat(frames).allSatisfy(f -> assertThat(f.getByte(f.readerIndex())).isEqualTo((byte) 'X'));
        shared.setByte(0, first);
    }

    @Test
    void subscribersHaveIndependentReaderIndices() {
        Keeper a = keeper("t");
        Keeper b = keeper("t");

        hub.fanOut("t", 1, 1, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());
        ByteBuf fa = a.frames.get(0);
        ByteBuf fb = b.frames.get(0);
        int length = fb.readableBytes();
        fa.skipBytes(fa.readableBytes());

        assertThat(fa.readableBytes()).isZero();
        assertThat(fb.readableBytes()).isEqualTo(length).isPositive();
    }

    @Test
    void frameContentIsTheEventJson() throws Exception {
        Keeper a = keeper("orders");

        hub.fanOut("orders", 42, 1_800_000_000_000L, "{\"item\":\"caf\u00e9\",\"q\":[1,2]}"
                .getBytes(StandardCharsets.UTF_8), System.nanoTime());

        assertThat(a.seqs).containsExactly(42L);
        JsonNode node = parse(a.frames.get(0));
        assertThat(node.path("type").asText()).isEqualTo("event");
        assertThat(node.path("topic").asText()).isEqualTo("orders");
        assertThat(node.path("id").asText()).isEqualTo("ep1-42");
        assertThat(node.path("ts").asLong()).isEqualTo(1_800_000_000_000L);
        assertThat(node.path("data").path("item").asText()).isEqualTo("caf\u00e9");
        assertThat(node.path("data").path("q")).hasSize(2);
    }

    @Test
    void sharedBufferIsFreedWhenEverySubscriberHasReleasedIt() {
        Keeper a = keeper("t");
        Keeper b = keeper("t");
        hub.fanOut("t", 1, 1, "1".getBytes(StandardCharsets.UTF_8), System.nanoTime());
        ByteBuf shared = alloc.direct.get(0);

        a.releaseAll();
        assertThat(shared.refCnt()).isEqualTo(1);
        b.releaseAll();

        assertThat(shared.refCnt()).isZero();
    }

    @Test
    void aSubscriberThatThrowsCostsTheOthersNothingAndTheBufferIsReleasedOnce() {
        Keeper before = keeper("t");
        hub.subscribe("t", new InlineSubscriber((seq, frame) -> {
            frame.release();
            throw new IllegalStateException("broken subscriber");
        }));
        Keeper after = keeper("t");

        hub.fanOut("t", 1, 1, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());

        assertThat(before.seqs).containsExactly(1L);
        assertThat(after.seqs).containsExactly(1L);
        ByteBuf shared = alloc.direct.get(0);
        assertThat(shared.refCnt()).as("the two keepers' references, the hub's released").isEqualTo(2);
        before.releaseAll();
        after.releaseAll();
        assertThat(shared.refCnt()).isZero();
    }

    @Test
    void subscriberThatReleasesAtOnceLeavesNothingBehind() {
        List<Long> seen = new ArrayList<>();
        hub.subscribe("t", new InlineSubscriber((seq, frame) -> {
            seen.add(seq);
            frame.release();
        }));

        for (long s = 1; s <= 5; s++) {
            hub.fanOut("t", s, s, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());
        }

        assertThat(seen).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(alloc.direct).hasSize(5).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    @Test
    void noSubscribersMeansNothingIsEncodedOrAllocated() {
        keeper("other");

        hub.fanOut("t", 1, 1, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());

        assertThat(alloc.direct).isEmpty();
        assertThat(alloc.heap).isEmpty();
    }

    @Test
    void unsubscribedSubscriberGetsNothingAndEmptyTopicAllocatesNothing() {
        Keeper a = keeper("t");
        Keeper b = keeper("t");
        hub.unsubscribe("t", a);

        hub.fanOut("t", 1, 1, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());

        assertThat(a.seqs).isEmpty();
        assertThat(b.seqs).containsExactly(1L);
        assertThat(hub.subscriberCount("t")).isEqualTo(1);

        hub.unsubscribe("t", b);
        hub.fanOut("t", 2, 2, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());

        assertThat(hub.subscriberCount("t")).isZero();
        assertThat(b.seqs).containsExactly(1L);
        assertThat(alloc.direct).hasSize(1);
    }

    @Test
    void subscribersOfOtherTopicsAreNotOffered() {
        Keeper a = keeper("a");
        Keeper b = keeper("b");

        hub.fanOut("a", 1, 1, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());

        assertThat(a.seqs).containsExactly(1L);
        assertThat(b.seqs).isEmpty();
    }

    @Test
    void eachFormatIsEncodedOnceAndSharedOnlyBySubscribersOfThatFormat() {
        EventFormat sse = (a, topic, id, ts, data) -> {
            byte[] line = ("id: " + id + "\ndata: x\n\n").getBytes(StandardCharsets.UTF_8);
            return a.directBuffer(line.length).writeBytes(line);
        };
        Keeper json1 = keeper("t");
        Keeper json2 = keeper("t");
        Keeper sse1 = new Keeper(sse);
        Keeper sse2 = new Keeper(sse);
        keepers.add(sse1);
        keepers.add(sse2);
        hub.subscribe("t", sse1);
        hub.subscribe("t", sse2);

        hub.fanOut("t", 3, 1234, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());

        assertThat(alloc.direct).as("one buffer per format").hasSize(2);
        assertThat(hub.subscriberCount("t")).isEqualTo(4);
        ByteBuf jsonShared = underlying(json1.frames.get(0), alloc.direct.get(0)) != null
                ? alloc.direct.get(0) : alloc.direct.get(1);
        ByteBuf sseShared = jsonShared == alloc.direct.get(0) ? alloc.direct.get(1) : alloc.direct.get(0);
        assertThat(underlying(json2.frames.get(0), jsonShared)).isSameAs(jsonShared);
        assertThat(underlying(sse1.frames.get(0), sseShared)).isSameAs(sseShared);
        assertThat(underlying(sse2.frames.get(0), sseShared)).isSameAs(sseShared);
        assertThat(sse1.frames.get(0).toString(StandardCharsets.UTF_8)).startsWith("id: ep1-3\n");
        assertThat(json1.frames.get(0).toString(StandardCharsets.UTF_8)).startsWith("{");

        hub.unsubscribe("t", sse1);
        hub.unsubscribe("t", sse2);
        assertThat(hub.subscriberCount("t")).isEqualTo(2);
    }

    @Test
    void aSubscriberThatComesTwiceIsOfferedOnceAndTheLastToLeaveEmptiesTheTopic() {
        Keeper a = keeper("t");
        hub.subscribe("t", a); // again: still one subscription
        Keeper b = keeper("t");
        assertThat(hub.subscriberCount("t")).isEqualTo(2);

        hub.fanOut("t", 1, 1234, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());
        assertThat(a.seqs).containsExactly(1L);
        assertThat(b.seqs).containsExactly(1L);

        hub.unsubscribe("t", a);
        hub.unsubscribe("t", a); // unknown by now: nothing changes
        assertThat(hub.subscriberCount("t")).isEqualTo(1);
        hub.unsubscribe("t", b);
        assertThat(hub.subscriberCount("t")).isZero();
        hub.fanOut("t", 2, 1234, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());
        assertThat(alloc.direct).as("nothing encoded for an empty topic").hasSize(1);
    }

    @Test
    void eventsQueuedWhileALoopIsBusyReachEachOfManySubscribersInOneBatch() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        try {
            int subscribers = 3000; // DELIVERIES_PER_TASK / 3000 rounds to 0 events: the lagging minimum applies
            List<Batching> all = new ArrayList<>();
            for (int i = 0; i < subscribers; i++) {
                Batching b = new Batching(loop);
                all.add(b);
                hub.subscribe("t", b);
            }
            java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
            loop.execute(() -> {
                try {
                    busy.await(); // the loop is busy while five events queue up
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            for (long seq = 1; seq <= 5; seq++) {
                hub.fanOut("t", seq, 1234, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());
            }
            busy.countDown();
            for (Batching b : all) { // the drain goes to MEMBERS_PER_SLICE of them per task
                awaitDelivered(b, 5);
            }
            loop.submit(() -> { }).sync(); // what the loop wrote is visible here

            for (Batching b : all) {
                assertThat(b.seqs).containsExactly(1L, 2L, 3L, 4L, 5L);
                assertThat(b.batches).as("one flush for the five events").isEqualTo(1);
            }
            assertThat(alloc.direct).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void aCrowdsDrainLetsItsLoopRunOtherWorkBetweenSlicesAndEachSubscriberGetsTheEventsOnce() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        try {
            int subscribers = 5 * TopicHub.MEMBERS_PER_SLICE + 7;
            List<Batching> all = new ArrayList<>();
            java.util.concurrent.atomic.AtomicInteger seenByOtherWork = new java.util.concurrent.atomic.AtomicInteger(-1);
            // the first subscriber, as it writes, gives its loop other work (as a read would: a publish).
            // Only the first such work counts: when the loop drains event 1 before event 2 arrives (a
            // slow loop thread), event 2's would run after everyone holds event 1.
            hub.subscribe("t", new Batching(loop) {
                @Override
                public void onLive(LiveBatch events) {
                    super.onLive(events);
                    loop.execute(() -> seenByOtherWork.compareAndSet(-1,
                            (int) all.stream().filter(b -> b.delivered() > 0).count()));
                }
            });
            for (int i = 1; i < subscribers; i++) {
                Batching b = new Batching(loop);
                all.add(b);
                hub.subscribe("t", b);
            }
            fanOut(hub, 1);
            fanOut(hub, 2);
            for (Batching b : all) {
                awaitDelivered(b, 2);
            }
            loop.submit(() -> { }).sync();

            assertThat(seenByOtherWork.get()).as("subscribers written before the loop's other work ran")
                    .isBetween(0, TopicHub.MEMBERS_PER_SLICE - 1);
            for (Batching b : all) {
                assertThat(b.seqs).containsExactly(1L, 2L);
            }
            assertThat(alloc.direct).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void aCrowdsDrainWhoseLoopShutsDownMidCrowdReleasesItsEventsAndEachFanOutEnds() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        ServerMetrics metrics = new ServerMetrics();
        TopicHub h = new TopicHub(topic -> "ep1", alloc, metrics);
        List<Batching> all = new ArrayList<>();
        // the first subscriber's write shuts its loop down (as a stopping server does): the rest
        // of the crowd waits in a continuation, which the shutdown cancels instead of running
        Batching first = new Batching(loop) {
            @Override
            public void onLive(LiveBatch events) {
                super.onLive(events);
                loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS);
            }
        };
        h.subscribe("t", first);
        for (int i = 1; i < 3 * TopicHub.MEMBERS_PER_SLICE; i++) {
            Batching b = new Batching(loop);
            all.add(b);
            h.subscribe("t", b);
        }
        loop.execute(() -> {
            fanOut(h, 1); // both queued before the drain runs: one drain, one cut
            fanOut(h, 2);
        });

        assertThat(loop.terminationFuture().await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(first.seqs).containsExactly(1L, 2L);
        assertThat(all.subList(0, TopicHub.MEMBERS_PER_SLICE - 1)).allSatisfy(b -> assertThat(b.seqs).containsExactly(1L, 2L));
        assertThat(all.subList(TopicHub.MEMBERS_PER_SLICE - 1, all.size()))
                .as("past the first slice: the continuation was cancelled, not run").allSatisfy(b -> assertThat(b.seqs).isEmpty());
        assertThat(alloc.direct).hasSize(2).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
        assertThat(metrics.registry().timer("push.fanout.latency").count()).as("each event's fan-out ended").isEqualTo(2);
    }

    @Test
    void aCrowdsDrainWhoseContinuationTheLoopRefusesFinishesAtOnceAndReleasesItsEvents() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean refusing = new java.util.concurrent.atomic.AtomicBoolean();
        // a loop that refuses the continuation, as one past shutting down does, but still runs
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop() {
            @Override
            public io.netty.util.concurrent.ScheduledFuture<?> schedule(Runnable task, long delay,
                                                                      java.util.concurrent.TimeUnit unit) {
                if (refusing.get()) {
                    throw new java.util.concurrent.RejectedExecutionException("refused by the test");
                }
                return super.schedule(task, delay, unit);
            }
        };
        try {
            ServerMetrics metrics = new ServerMetrics();
            TopicHub h = new TopicHub(topic -> "ep1", alloc, metrics);
            List<Batching> all = new ArrayList<>();
            for (int i = 0; i < 2 * TopicHub.MEMBERS_PER_SLICE; i++) {
                Batching b = new Batching(loop);
                all.add(b);
                h.subscribe("t", b);
            }
            refusing.set(true);
            fanOut(h, 1);
            loop.submit(() -> { }).sync();
            assertThat(all.subList(0, TopicHub.MEMBERS_PER_SLICE)).allSatisfy(b -> assertThat(b.seqs).containsExactly(1L));
            assertThat(all.subList(TopicHub.MEMBERS_PER_SLICE, all.size())).allSatisfy(b -> assertThat(b.seqs).isEmpty());
            assertThat(alloc.direct).hasSize(1).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
            assertThat(metrics.registry().timer("push.fanout.latency").count()).isEqualTo(1);

            refusing.set(false); // the group is not left "scheduled": the next event is drained, to all
            fanOut(h, 2);
            for (int i = 0; i < all.size(); i++) {
                awaitDelivered(all.get(i), i < TopicHub.MEMBERS_PER_SLICE ? 2 : 1);
            }
            loop.submit(() -> { }).sync();
            assertThat(all.get(all.size() - 1).seqs).containsExactly(2L);
            assertThat(alloc.direct).hasSize(2).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    /** A fan-out clock the test moves by hand: which events count as "close" is the test's choice. */
    final java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong(1_000_000_000L);

    private TopicHub coalescing(java.time.Duration window) {
        return coalescing(window, 1);
    }

    private TopicHub coalescing(java.time.Duration window, int minSubscribers) {
        return new TopicHub(topic -> "ep1", alloc, new ServerMetrics(), window, minSubscribers, nanos::get);
    }

    private static void fanOut(TopicHub h, long seq) {
        h.fanOut("t", seq, 1234, "{}".getBytes(StandardCharsets.UTF_8), System.nanoTime());
    }

    /** Waits (bounded) for what the loop delivers; fails rather than hangs. */
    private static void awaitDelivered(Batching b, int events) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (b.delivered() < events && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }

    @Test
    void eventsThatComeWithinTheCoalescingWindowReachASubscriberInOneFlush() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        try {
            // long enough that the three fan-outs below always fall inside it, however loaded the machine
            TopicHub h = coalescing(java.time.Duration.ofMillis(300));
            Batching b = new Batching(loop);
            h.subscribe("t", b);

            fanOut(h, 1); // the first event after a quiet spell: at once
            loop.submit(() -> { }).sync();
            assertThat(b.seqs).containsExactly(1L);

            fanOut(h, 2); // close behind event 1 (the clock has not moved): held for the window...
            fanOut(h, 3); // ...and these join it
            fanOut(h, 4);
            loop.submit(() -> { }).sync();
            assertThat(b.seqs).as("held for the window, not drained at once").containsExactly(1L);

            awaitDelivered(b, 4);
            assertThat(b.seqs).containsExactly(1L, 2L, 3L, 4L);
            assertThat(b.batches).as("event 1 alone, then 2-4 in one flush").isEqualTo(2);
            assertThat(alloc.direct).hasSize(4).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void aTopicWithFewerSubscribersOnALoopThanTheCoalescingMinimumIsNeverHeld() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        try {
            TopicHub h = coalescing(java.time.Duration.ofSeconds(10), 3); // a held event would not arrive in this test
            Batching a = new Batching(loop);
            Batching b = new Batching(loop);
            h.subscribe("t", a);
            h.subscribe("t", b);

            fanOut(h, 1);
            fanOut(h, 2); // close behind event 1 (the clock has not moved), but two subscribers are below 3
            loop.submit(() -> { }).sync();
            assertThat(a.seqs).containsExactly(1L, 2L);
            assertThat(b.seqs).containsExactly(1L, 2L);

            Batching c = new Batching(loop);
            h.subscribe("t", c); // three now: the next close event is held
            fanOut(h, 3);
            loop.submit(() -> { }).sync();
            assertThat(c.seqs).as("held for the window").isEmpty();
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
        assertThat(alloc.direct).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
    }

    @Test
    void anEventAfterAQuietSpellIsNotDelayedByTheCoalescingWindow() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        try {
            TopicHub h = coalescing(java.time.Duration.ofSeconds(10)); // a held event would not arrive in this test
            Batching b = new Batching(loop);
            h.subscribe("t", b);

            fanOut(h, 1);
            loop.submit(() -> { }).sync(); // runs after a drain started at once, before one held for 10 s
            assertThat(b.seqs).containsExactly(1L);

            nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(11)); // longer apart than the window
            fanOut(h, 2);
            loop.submit(() -> { }).sync();
            assertThat(b.seqs).containsExactly(1L, 2L);
            assertThat(b.batches).isEqualTo(2);
            assertThat(alloc.direct).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void aHeldEventWaitsOnlyForTheRestOfTheWindowSinceTheGroupsPreviousWrite() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        try {
            TopicHub h = coalescing(java.time.Duration.ofSeconds(10));
            Batching b = new Batching(loop);
            h.subscribe("t", b);
            fanOut(h, 1); // written at once, at clock time T (which is when the group was made: no gap yet)
            loop.submit(() -> { }).sync();

            // 9.9 s of the window have passed when event 2 comes: it waits the 0.1 s left, not a
            // whole window from its own arrival, so a hold never adds more than the window (held
            // at all: the mean of the gaps so far, 0 and 9.9 s, is under half the window)
            nanos.addAndGet(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(9_900));
            fanOut(h, 2);
            loop.submit(() -> { }).sync();
            assertThat(b.seqs).as("held for the rest of the window").containsExactly(1L);
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(3);
            while (b.delivered() < 2 && System.nanoTime() < deadline) { // a drain held a whole window comes in 10 s
                Thread.sleep(5);
            }
            assertThat(b.seqs).containsExactly(1L, 2L);
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
        assertThat(alloc.direct).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
    }

    @Test
    void eventsThatComeLessThanTwoPerWindowAreNotHeldEvenInsideTheWindow() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        try {
            TopicHub h = coalescing(java.time.Duration.ofSeconds(10)); // a held event would not arrive in this test
            Batching b = new Batching(loop);
            h.subscribe("t", b);
            nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(60)); // a quiet start
            // 7 s apart: inside the 10 s window after the previous write, but a hold would merge
            // nothing (the next event is 7 s away) and only add 3 s to each
            for (long seq = 1; seq <= 6; seq++) {
                fanOut(h, seq);
                loop.submit(() -> { }).sync();
                assertThat(b.seqs).as("event %d at once", seq).hasSize((int) seq);
                nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(7));
            }
            // one early event (2 s after the previous) in that pace is not a faster topic yet
            nanos.addAndGet(-java.util.concurrent.TimeUnit.SECONDS.toNanos(5));
            fanOut(h, 7);
            loop.submit(() -> { }).sync();
            assertThat(b.seqs).as("an early event at once").containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L);
            assertThat(b.batches).isEqualTo(7);
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
        assertThat(alloc.direct).hasSize(7).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
    }

    @Test
    void aTopicThatSpeedsUpToMoreThanTwoEventsPerWindowIsHeldFromThen() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        try {
            TopicHub h = coalescing(java.time.Duration.ofSeconds(10));
            Batching b = new Batching(loop);
            h.subscribe("t", b);
            nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(60)); // a quiet start
            for (long seq = 1; seq <= 4; seq++) { // 9 s apart: each at once
                nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(9));
                fanOut(h, seq);
                loop.submit(() -> { }).sync();
            }
            assertThat(b.seqs).hasSize(4);
            // then 1 s apart: the mean gap falls under half the window within a few events, and
            // the next one inside the window waits for it (held for the test's remaining seconds)
            int atOnce = 0;
            for (long seq = 5; seq <= 12; seq++) {
                nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(1));
                fanOut(h, seq);
                loop.submit(() -> { }).sync();
                if (b.seqs.size() < seq) {
                    break;
                }
                atOnce++;
            }
            assertThat(atOnce).as("events 1 s apart that still went at once").isBetween(1, 4);
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
        assertThat(alloc.direct).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
    }

    @Test
    void aBacklogLargerThanOneTaskGoesOnAtOnceAndIsNotHeldAWindowPerTask() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        try {
            // the real clock: a task takes 16 events, 40 queue while the loop is busy
            TopicHub h = new TopicHub(topic -> "ep1", alloc, new ServerMetrics(), java.time.Duration.ofMillis(500), 1,
                    System::nanoTime);
            Batching b = new Batching(loop);
            h.subscribe("t", b);
            java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
            loop.execute(() -> {
                try {
                    busy.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            for (long seq = 1; seq <= 40; seq++) {
                fanOut(h, seq);
            }
            long released = System.nanoTime();
            busy.countDown();
            long deadline = released + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(750); // 1.5 windows
            while (b.delivered() < 40 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            // held a window per task, events 33-40 would come after two windows (1 s)
            assertThat(b.delivered()).as("a queued event waits at most one window").isEqualTo(40);
            assertThat(b.seqs).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
        assertThat(alloc.direct).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
    }

    @Test
    void eventsHeldForTheWindowAreNotOfferedToAConnectionThatClosedMeanwhileAndAreReleased() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        try {
            TopicHub h = coalescing(java.time.Duration.ofMillis(200));
            Batching closing = new Batching(loop);
            Batching staying = new Batching(loop);
            h.subscribe("t", closing);
            h.subscribe("t", staying);
            fanOut(h, 1);
            loop.submit(() -> { }).sync();

            fanOut(h, 2); // held
            fanOut(h, 3);
            h.unsubscribe("t", closing); // its connection closes while the drain waits

            awaitDelivered(staying, 3);
            assertThat(staying.seqs).containsExactly(1L, 2L, 3L);
            assertThat(closing.seqs).containsExactly(1L);
            assertThat(alloc.direct).hasSize(3).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
        } finally {
            loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void eventsHeldForTheWindowWhenTheLoopShutsDownAreReleasedAndLaterOnesToo() throws Exception {
        io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
        TopicHub h = coalescing(java.time.Duration.ofSeconds(10));
        Batching b = new Batching(loop);
        h.subscribe("t", b);
        fanOut(h, 1);
        loop.submit(() -> { }).sync();
        fanOut(h, 2); // held for 10 s
        fanOut(h, 3);

        loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync(); // cancels the held drain
        fanOut(h, 4); // the loop refuses it

        assertThat(b.seqs).containsExactly(1L);
        assertThat(alloc.direct).hasSize(4).allSatisfy(buf -> assertThat(buf.refCnt()).isZero());
    }

    /** Counts its batches; keeps nothing of what it is lent. */
    static class Batching implements TopicHub.Subscriber {
        final io.netty.util.concurrent.EventExecutor loop;
        final List<Long> seqs = new ArrayList<>();
        int batches;

        Batching(io.netty.util.concurrent.EventExecutor loop) {
            this.loop = loop;
        }

        @Override
        public io.netty.util.concurrent.EventExecutor executor() {
            return loop;
        }

        @Override
        public void onLive(LiveBatch events) {
            for (int i = 0; i < events.size(); i++) {
                seqs.add(events.seq(i));
            }
            batches++;
            delivered = seqs.size();
        }

        /** Events of finished batches, readable from the test's thread. */
        volatile int delivered;

        int delivered() {
            return delivered;
        }
    }
}
