package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import io.pushd.protocol.EventId;
import io.pushd.server.metrics.ServerMetrics;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Live fan-out. Each event is encoded once per {@link EventFormat} that has subscribers, in a
 * direct buffer that every subscriber of that format shares: one reference per event loop
 * ({@link ByteBuf#retainedDuplicate()}), lent to each subscriber on that loop in a
 * {@link LiveBatch}, so a subscriber costs no reference count and no buffer object. Subscribers
 * are grouped by format and event loop, so an event costs one encoding per format and one task per
 * event loop (several events per task when they queue up), not one per subscriber.
 * With a coalescing window ({@code fanout.coalesceWindow}), a crowded group whose events come more
 * than two per window is written at most once per window: events wait up to the window, so a
 * subscriber gets several in one write.
 */
public final class TopicHub {

    private static final Logger log = LoggerFactory.getLogger(TopicHub.class);

    /** A live reader of one topic, confined to one event loop. */
    public interface Subscriber {
        /** The event loop {@link #onLive} runs on. */
        EventExecutor executor();

        /** How this subscriber's transport encodes events; fixed for the subscriber's life. */
        default EventFormat format() {
            return EventFormat.JSON;
        }

        /**
         * On {@link #executor()}: the live events of one fan-out task, encoded in
         * {@link #format()}, in sequence order. The batch lends its buffers for this call only
         * (see {@link LiveBatch}); what is written must be flushed before returning: the hub
         * calls once per subscriber per task, so the events of a task reach a subscriber in one
         * write syscall (normally; one per run of consecutive ones it takes).
         */
        void onLive(LiveBatch events);

        /**
         * On {@link #executor()}: the topic's history was replaced (a cluster node saw Redis lose
         * it): a subscriber tells its client now, not with the next event, which may never come.
         */
        default void onHistoryReplaced() {
        }
    }

    /**
     * Per topic: one group per (format, event loop), groups of one format next to each other. The
     * arrays are never changed in place: {@link #subscribe} and {@link #unsubscribe} replace them
     * inside the map's per-key lock, so {@link #fanOut} reads a consistent snapshot without a lock
     * and an idle topic costs a map entry and two small arrays, not three maps.
     */
    private final Map<String, LoopGroup[]> subscribers = new ConcurrentHashMap<>();
    private final Function<String, String> epochOf;
    private final ByteBufAllocator alloc;
    private final ServerMetrics metrics;
    /** {@code fanout.coalesceWindow} in nanoseconds; 0 = every drain at once. */
    private final long coalesceNanos;
    /** {@code fanout.coalesceMinSubscribers}: smaller loop groups are never held. */
    private final int coalesceMinMembers;
    private final LongSupplier nanoClock;

    /** @param epochOf the epoch of a topic's event IDs: {@code EventHistory::epoch}, asked per topic */
    public TopicHub(Function<String, String> epochOf, ByteBufAllocator alloc, ServerMetrics metrics) {
        this(epochOf, alloc, metrics, Duration.ZERO, 1);
    }

    /**
     * @param coalesceWindow while a loop group's events come more than two per this, it is
     *                       drained at most once per this: an event that comes less than it after
     *                       the group's previous drain started waits for the rest of it, so the
     *                       events that follow within it reach each subscriber in the same write
     *                       (one syscall, fewer TCP segments); slower events, and one after a
     *                       quiet spell, go at once. 0 = off.
     * @param coalesceMinSubscribers a topic's subscribers on one event loop are held only when at
     *                       least this many: the window saves a write per subscriber, worth added
     *                       latency for a crowd, not for a handful
     */
    public TopicHub(Function<String, String> epochOf, ByteBufAllocator alloc, ServerMetrics metrics,
                    Duration coalesceWindow, int coalesceMinSubscribers) {
        this(epochOf, alloc, metrics, coalesceWindow, coalesceMinSubscribers, System::nanoTime);
    }

    /** @param nanoClock what "closer than the window" is measured with (tests pick the gaps) */
    TopicHub(Function<String, String> epochOf, ByteBufAllocator alloc, ServerMetrics metrics,
             Duration coalesceWindow, int coalesceMinSubscribers, LongSupplier nanoClock) {
        this.epochOf = epochOf;
        this.alloc = alloc;
        this.metrics = metrics;
        this.coalesceNanos = coalesceWindow.toNanos();
        this.coalesceMinMembers = coalesceMinSubscribers;
        this.nanoClock = nanoClock;
    }

    public void subscribe(String topic, Subscriber s) {
        EventFormat format = s.format();
        EventExecutor loop = s.executor();
        subscribers.compute(topic, (t, groups) -> {
            if (groups == null) {
                return new LoopGroup[] {new LoopGroup(format, loop, s)};
            }
            int sameFormat = -1;
            for (int i = 0; i < groups.length; i++) {
                LoopGroup g = groups[i];
                if (g.format == format) {
                    if (g.loop == loop) {
                        g.add(s);
                        return groups;
                    }
                    sameFormat = i;
                }
            }
            // a new group goes right after the last of its format (or at the end)
            int at = sameFormat < 0 ? groups.length : sameFormat + 1;
            LoopGroup[] more = new LoopGroup[groups.length + 1];
            System.arraycopy(groups, 0, more, 0, at);
            more[at] = new LoopGroup(format, loop, s);
            System.arraycopy(groups, at, more, at + 1, groups.length - at);
            return more;
        });
    }

    public void unsubscribe(String topic, Subscriber s) {
        EventFormat format = s.format();
        EventExecutor loop = s.executor();
        subscribers.computeIfPresent(topic, (t, groups) -> {
            for (int i = 0; i < groups.length; i++) {
                LoopGroup g = groups[i];
                if (g.format == format && g.loop == loop) {
                    if (g.remove(s) > 0) {
                        return groups;
                    }
                    if (groups.length == 1) {
                        return null;
                    }
                    LoopGroup[] fewer = new LoopGroup[groups.length - 1];
                    System.arraycopy(groups, 0, fewer, 0, i);
                    System.arraycopy(groups, i + 1, fewer, i, groups.length - i - 1);
                    return fewer;
                }
            }
            return groups;
        });
    }

    /**
     * The history of {@code topic} was replaced: each of its subscribers hears of it on its own
     * event loop ({@link Subscriber#onHistoryReplaced}). Any thread.
     */
    public void historyReplaced(String topic) {
        LoopGroup[] groups = subscribers.get(topic);
        if (groups == null) {
            return;
        }
        for (LoopGroup g : groups) {
            try {
                g.loop.execute(() -> {
                    for (Subscriber s : g.members) { // the members of now: one that left hears nothing
                        s.onHistoryReplaced();
                    }
                });
            } catch (RejectedExecutionException shuttingDown) {
                // the loop is going, and its connections with it
            }
        }
    }

    public int subscriberCount(String topic) {
        LoopGroup[] groups = subscribers.get(topic);
        int n = 0;
        if (groups != null) {
            for (LoopGroup g : groups) {
                n += g.members.length;
            }
        }
        return n;
    }

    /**
     * Called by the publisher's writer (its thread, or an event loop that ran a publish itself) or
     * a cluster node's applier, after the event is in the store, in sequence order. A
     * subscriber that registers while this runs may or may not get the event; either way it is
     * covered, because it reads the head after registering and the event is already appended.
     */
    public void fanOut(String topic, long seq, long timestampMillis, byte[] data, long appendedNanos) {
        LoopGroup[] groups = subscribers.get(topic);
        if (groups == null) {
            return;
        }
        EventId id = new EventId(epochOf.apply(topic), seq);
        AtomicInteger loopsLeft = new AtomicInteger(1);
        ByteBuf shared = null;
        try {
            EventFormat encoded = null;
            for (LoopGroup g : groups) {
                if (g.format != encoded) { // groups of one format are adjacent: one encoding per format
                    if (shared != null) {
                        shared.release();
                        shared = null;
                    }
                    shared = g.format.encode(alloc, topic, id, timestampMillis, data);
                    encoded = g.format;
                }
                loopsLeft.incrementAndGet();
                g.offer(new Pending(topic, id.epoch(), seq, shared.retainedDuplicate(), loopsLeft, appendedNanos));
            }
        } finally {
            if (shared != null) {
                shared.release();
            }
            done(loopsLeft, appendedNanos);
        }
    }

    /** The last event loop to finish records the fan-out latency (append to last live write). */
    private void done(AtomicInteger loopsLeft, long appendedNanos) {
        if (loopsLeft.decrementAndGet() == 0) {
            metrics.fannedOut(appendedNanos);
        }
    }

    /** One event waiting for one event loop; {@code forLoop} is that loop's reference. */
    private record Pending(String topic, String epoch, long seq, ByteBuf forLoop, AtomicInteger loopsLeft,
                           long appendedNanos) {
    }

    /**
     * The subscribers of one topic and format on one event loop, and the events queued for them.
     * One task drains the queue: when events arrive faster than the loop delivers them, a task
     * takes several — at most {@link #MAX_EVENTS_PER_TASK}, about {@link #DELIVERIES_PER_TASK}
     * writes but at least {@link #EVENTS_PER_TASK_WHEN_LAGGING} events — hands them to each subscriber
     * as one batch, which it writes and flushes once: one write syscall per subscriber per batch
     * instead of per event. A crowd is written {@link #MEMBERS_PER_SLICE} subscribers per task, the
     * loop going round in between, so the loop's other work (a publish) waits for one slice only.
     */
    private final class LoopGroup implements Runnable, GenericFutureListener<Future<Object>> {
        /*
         * One group per idle subscriber when every subscriber has a topic of its own (15,000 idle
         * connections, 15,000 groups), so the group is its own drain task and delayed-drain
         * listener, "scheduled" is a field, and the queue comes with the first event.
         */
        private static final AtomicIntegerFieldUpdater<LoopGroup> SCHEDULED =
                AtomicIntegerFieldUpdater.newUpdater(LoopGroup.class, "scheduled");
        private static final AtomicReferenceFieldUpdater<LoopGroup, Queue> QUEUE =
                AtomicReferenceFieldUpdater.newUpdater(LoopGroup.class, Queue.class, "queue");

        final EventFormat format;
        final EventExecutor loop;
        /** Copy-on-write, changed only inside the topic's map lock: a drain iterates a snapshot. */
        volatile Subscriber[] members;
        /** Null until the first {@link #offer}; fan-out may offer from more than one thread (shared history). */
        private volatile Queue<Pending> queue;
        /** 1 while a drain is scheduled or running. */
        private volatile int scheduled;
        /**
         * When the previous drain started (System.nanoTime), with a coalescing window. Written on
         * {@link #loop} only; a stale read by the fan-out thread merely drains one event at once
         * or a little late, never loses it.
         */
        private volatile long lastDrainNanos = nanoClock.getAsLong() - (1L << 50);
        /** When the previous event was offered (see {@link #meanGapNanos}); at first, when the group was made. */
        private volatile long lastOfferNanos = nanoClock.getAsLong();
        /**
         * The gap between the group's events, averaged over the last few (weights 1/4, 3/16, ...),
         * each gap counted as at most two windows so a quiet spell is forgotten within a few close
         * events. Starts at 0: a new group's close events are held at once. Written by whoever
         * offers; two fan-out threads (a shared history) racing here only blur an estimate.
         */
        private volatile long meanGapNanos;
        /**
         * A drain that stopped after {@link #MEMBERS_PER_SLICE} subscribers to let its loop read,
         * and goes on in the loop's next round; null otherwise. On {@link #loop} only (a cancelled
         * continuation's listener runs there too).
         */
        private Rest rest;
        /**
         * A loop that shuts down cancels its scheduled tasks instead of running them: the events
         * a delayed drain was holding are released here then, not leaked.
         */
        @Override
        public void operationComplete(Future<Object> delayedDrain) {
            if (delayedDrain.isCancelled()) {
                releaseRest();
                releaseQueued();
            }
        }

        /** The drain task. */
        @Override
        public void run() {
            drain();
        }

        @SuppressWarnings("unchecked")
        private Queue<Pending> queue() {
            Queue<Pending> q = queue;
            if (q == null) {
                QUEUE.compareAndSet(this, null, new ConcurrentLinkedQueue<Pending>());
                q = queue;
            }
            return q;
        }

        private boolean schedule() {
            return SCHEDULED.compareAndSet(this, 0, 1);
        }

        LoopGroup(EventFormat format, EventExecutor loop, Subscriber first) {
            this.format = format;
            this.loop = loop;
            this.members = new Subscriber[] {first};
        }

        void add(Subscriber s) {
            Subscriber[] m = members;
            for (Subscriber x : m) {
                if (x == s) {
                    return;
                }
            }
            Subscriber[] more = Arrays.copyOf(m, m.length + 1);
            more[m.length] = s;
            members = more;
        }

        /** Returns how many members are left. */
        int remove(Subscriber s) {
            Subscriber[] m = members;
            for (int i = 0; i < m.length; i++) {
                if (m[i] == s) {
                    Subscriber[] fewer = new Subscriber[m.length - 1];
                    System.arraycopy(m, 0, fewer, 0, i);
                    System.arraycopy(m, i + 1, fewer, i, m.length - i - 1);
                    members = fewer;
                    return fewer.length;
                }
            }
            return m.length;
        }

        void offer(Pending p) {
            if (coalesceNanos > 0) {
                long now = nanoClock.getAsLong();
                long gap = Math.min(now - lastOfferNanos, 2 * coalesceNanos);
                lastOfferNanos = now;
                meanGapNanos += (gap - meanGapNanos) >> 2;
            }
            queue().add(p);
            if (schedule()) {
                drainWithin(holdNanos());
            }
        }

        /**
         * How long the next drain waits: with a window, a group of at least the minimum size whose
         * events come more than two per window (their mean gap under half of it) is written at
         * most once per window, so an event that comes less than the window after the group's
         * previous drain started waits for the rest of it, and the ones that follow within it
         * share its write. Slower, a hold would merge nothing but the odd early event and only add
         * its latency (at 50 events a second and a 30 ms window, 10 ms to every other one), so
         * they go at once; so does an event after a quiet spell, one that a drain longer than the
         * window left queued, and a backlog (see {@link #drain}). A small group's write is cheap:
         * holding its events would only add latency.
         */
        private long holdNanos() {
            if (coalesceNanos == 0 || members.length < coalesceMinMembers
                    || meanGapNanos >= coalesceNanos >> 1) {
                return 0;
            }
            return lastDrainNanos + coalesceNanos - nanoClock.getAsLong();
        }

        /** After {@link #schedule()} succeeded. */
        private void drainWithin(long nanos) {
            try {
                if (nanos > 0) {
                    loop.schedule(this, nanos, TimeUnit.NANOSECONDS).addListener(this);
                } else {
                    loop.execute(this); // behind whatever else the loop has to do
                }
            } catch (RejectedExecutionException shuttingDown) {
                releaseQueued();
            }
        }

        /** The loop will not drain (it is shutting down): release what waits, and what comes after. */
        private void releaseQueued() {
            Queue<Pending> queue = queue();
            do {
                Pending q;
                while ((q = queue.poll()) != null) {
                    q.forLoop().release();
                    done(q.loopsLeft(), q.appendedNanos());
                }
                scheduled = 0;
                // an offer between the last poll and the reset saw a drain scheduled and left its event
            } while (!queue.isEmpty() && schedule());
        }

        /** On {@link #loop}. */
        private void drain() {
            Queue<Pending> queue = queue(); // an offer scheduled this drain: the queue is there
            Rest going = rest;
            Drain drain;
            Subscriber[] to;
            int max;
            int from;
            if (going != null) { // the rest of a drain cut short: the same events, the same subscribers
                rest = null;
                drain = going.drain;
                to = going.members;
                max = going.max;
                from = going.next;
            } else {
                if (coalesceNanos > 0) {
                    lastDrainNanos = nanoClock.getAsLong();
                }
                drain = DRAIN.get();
                to = members;
                max = Math.min(drain.batch.capacity(),
                        Math.max(EVENTS_PER_TASK_WHEN_LAGGING, DELIVERIES_PER_TASK / Math.max(1, to.length)));
                Pending p;
                while (drain.batch.size() < max && (p = queue.poll()) != null) {
                    drain.batch.add(p.epoch(), p.seq(), p.forLoop(), format.payloadBytes(p.forLoop().readableBytes()));
                    drain.pendings[drain.batch.size() - 1] = p;
                }
                from = 0;
            }
            LiveBatch batch = drain.batch;
            Pending[] pendings = drain.pendings;
            int n = batch.size();
            boolean cut = false;
            try {
                if (n > 0) { // a drain scheduled for events an earlier drain took finds none
                    int until = Math.min(to.length, from + MEMBERS_PER_SLICE);
                    deliver(batch, pendings[0].topic(), to, from, until);
                    // the events stay lent until the last subscriber had them
                    cut = until < to.length && cutShort(drain, to, max, until);
                }
            } finally {
                if (!cut) {
                    finish(queue, batch, pendings, n, max);
                }
            }
        }

        /** After a drain's last subscriber: its events released, and the next drain scheduled if events wait. */
        private void finish(Queue<Pending> queue, LiveBatch batch, Pending[] pendings, int n, int max) {
            metrics.delivered(batch.deliveries(), batch.deliveredBytes(), false); // once per drain, not per subscriber
            release(batch, pendings, n);
            scheduled = 0;
            if (!queue.isEmpty() && schedule()) {
                // More than a task takes was queued: a backlog goes on at once, window or not
                // (held a window per task, a burst would wait a window per 8 or 16 events).
                // Events that came while this drain wrote wait for the rest of the window.
                drainWithin(n >= max ? 0 : holdNanos());
            }
        }

        private void release(LiveBatch batch, Pending[] pendings, int n) {
            batch.clear();
            for (int i = 0; i < n; i++) {
                pendings[i].forLoop().release();
                done(pendings[i].loopsLeft(), pendings[i].appendedNanos());
                pendings[i] = null;
            }
        }

        /**
         * Stops a drain after {@code next} of its subscribers and lets the loop go round (read what
         * came, a publish first) before the rest get the events: their task is scheduled, not
         * queued, so the loop's next round of I/O comes first. The events and the thread's batch
         * go with the rest, and the thread takes a new batch. False when the loop is shutting down
         * (the drain then finishes now).
         */
        private boolean cutShort(Drain drain, Subscriber[] to, int max, int next) {
            try {
                loop.schedule(this, 0, TimeUnit.NANOSECONDS).addListener(this);
            } catch (RejectedExecutionException shuttingDown) {
                return false;
            }
            rest = new Rest(drain, to, max, next);
            if (drain == DRAIN.get()) {
                DRAIN.set(newDrain());
            }
            return true;
        }

        /** A cut-short drain whose continuation will not run (the loop shuts down): its events are released. */
        private void releaseRest() {
            Rest r = rest;
            if (r == null) {
                return;
            }
            rest = null;
            release(r.drain.batch, r.drain.pendings, r.drain.batch.size());
            scheduled = 0;
        }

        private void deliver(LiveBatch batch, String topic, Subscriber[] to, int from, int until) {
            for (int i = from; i < until; i++) {
                Subscriber s = to[i];
                try {
                    s.onLive(batch);
                } catch (RuntimeException ex) {
                    // One broken subscriber must not cost the others the event; the batch's
                    // buffers are the hub's, released after every subscriber had them.
                    log.warn("subscriber of {} failed on a live event", topic, ex);
                }
            }
        }
    }

    /** A drain's events as subscribers see them, and as the hub releases them. */
    private record Drain(LiveBatch batch, Pending[] pendings) {
    }

    /** A drain cut short: its events, the subscribers it iterates, and the first of them still to write. */
    private record Rest(Drain drain, Subscriber[] members, int max, int next) {
    }

    private static Drain newDrain() {
        return new Drain(new LiveBatch(MAX_EVENTS_PER_TASK), new Pending[MAX_EVENTS_PER_TASK]);
    }

    /** One per event loop thread (not per topic: idle topics stay small); a cut-short drain takes it along. */
    private static final FastThreadLocal<Drain> DRAIN = new FastThreadLocal<>() {
        @Override
        protected Drain initialValue() {
            return newDrain();
        }
    };

    /**
     * Subscribers one task writes to before the loop goes round (reads, a publish) and the rest
     * get the events in a task of their own. A subscriber's write is one syscall, 5-10 µs with
     * the receiver's TCP work on loopback, so a crowd of 500 on one loop kept it from reading for
     * 3-5 ms per drain: a publish that came meanwhile waited that long for its answer (publish
     * p99 10-20 ms while 1,000 subscribers took 100 events a second). 64 writes: about half a
     * millisecond.
     */
    static final int MEMBERS_PER_SLICE = 64;

    /** Events one fan-out task of one loop takes at most. */
    static final int MAX_EVENTS_PER_TASK = 16;
    /** Writes one fan-out task aims at (about a millisecond): more events per task when there are few subscribers. */
    static final int DELIVERIES_PER_TASK = 2048;
    /**
     * Events a task takes, if queued, however many subscribers there are. A subscriber's extra
     * event costs a buffer in its outbound queue (a fraction of a microsecond), its flush — one
     * write syscall, several microseconds with the receiver's TCP work on loopback — is paid once
     * per task: so a loop that lags (10,000 subscribers, or a starved core) writes 8 queued events
     * per syscall instead of one, and catches up, for a task at most ~1.5 times as long.
     */
    static final int EVENTS_PER_TASK_WHEN_LAGGING = 8;
}
