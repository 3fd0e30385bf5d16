package io.pushd.server.cluster;

import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.history.EventHistory;
import io.pushd.server.history.TopicRange;
import io.pushd.server.store.ReplayCache;
import io.pushd.server.topic.TopicHub;
import java.nio.charset.StandardCharsets;
import io.lettuce.core.KeyValue;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import net.openhft.chronicle.core.time.SystemTimeProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The history of a cluster node: Redis holds every topic (see {@link Scripts}); this node keeps,
 * per topic it was asked about, a {@link TopicLog} of what it has applied, and fans out every
 * event of those topics, its own and other nodes' (pub/sub), in sequence order.
 *
 * <p>Pub/sub is at-most-once. One applier thread takes every event; an event that does not follow
 * the topic's head (a lost message, a reconnect, another epoch) makes it backfill from the topic's
 * stream first, so subscriptions keep their rule "live only at lastSeq + 1, else read the store".
 * The same backfill runs after every reconnect to Redis and once a second for every topic, for a
 * message lost with nothing after it.
 *
 * <p>Reads never wait for Redis. The applier appends every event it applies to the node's
 * {@link ReplayCache} (a Chronicle Queue under {@code store.dataDir}) before it fans it out, and
 * keeps the newest few in the topic's {@link TopicLog} ring; {@link #read} serves from those two
 * or answers {@link #NOT_AT_HAND}, and {@link #fetch} reads a page of the stream asynchronously,
 * hands it to the caller and has the applier append it to the cache.
 *
 * <p>A node subscribes per topic ({@link RedisLink#follow}) when it first loads the topic, before
 * it reads the head, so nothing stored in between is missed; after a reconnect, and for a topic
 * found behind twice with no live event between, it subscribes again before it backfills.
 *
 * <p>A topic with no local subscriber and no local read for {@code cluster.idleTopicTimeout} is
 * no longer followed: the applier unsubscribes, forgets its {@link TopicLog} and drops it from the
 * replay cache (keeping only its epoch and head, to pass to Redis when it is loaded again: an ID
 * is never reused, as for a followed topic). The next use loads it again like a topic never seen.
 * A subscriber registers with the hub before it asks {@link #prepare}, and that ask and the
 * applier's retiring lock the topic's log: either the applier sees the subscriber (or the use)
 * and keeps following, or the subscriber sees the log retired and waits for a fresh load.
 */
public final class RedisHistory implements EventHistory {

    private static final Logger log = LoggerFactory.getLogger(RedisHistory.class);
    /** Recent events kept in memory per topic without a replay cache: then the only local copy. */
    static final int RING = 1024;
    /**
     * With the replay cache, the ring is only the hot tail: the reads a live subscriber makes when
     * an offer found it unwritable or mid-replay, a few events behind the head, cost no lookup in
     * the queue; and a followed topic holds 64 events of heap instead of 1,024 (the rest is on disk).
     */
    static final int HOT_TAIL = 64;
    private static final int PAGE = 256;
    private static final long RESYNC_EVERY_MILLIS = 1000;

    private final Map<String, TopicLog> logs = new ConcurrentHashMap<>();
    private final ScheduledExecutorService applier;
    private final RedisLink redis;
    private final java.time.Duration timeout;
    /** Null when it could not be opened: then the ring and Redis serve every read. */
    private final ReplayCache cache;
    /** Pages read from Redis for readers ({@link #fetch}): what the replay cache saves. */
    private final LongAdder pageReads = new LongAdder();
    /** {@code limits.maxTopics}: how many topics this node holds state of (followed or published through it). */
    private final int maxTopics;
    /** The topics this node followed or published to; bounded by {@link #maxTopics} for publishes. */
    private final java.util.Set<String> held = ConcurrentHashMap.newKeySet();
    private volatile boolean topicLimitLogged;
    /** Writer thread: when each topic of {@link #held} was last published through this node. */
    private final Map<String, Long> lastPublished = new java.util.HashMap<>();
    /** Writer thread: when {@link #releasePublishOnly} last ran. */
    private long lastPublishPrune = now();
    private volatile Thread applierThread;
    private volatile TopicHub hub;
    private volatile long lastFailureLog;
    private volatile long lastTaskFailureLog;
    private final java.util.concurrent.atomic.AtomicBoolean reconnectPending = new java.util.concurrent.atomic.AtomicBoolean();
    /** Applier thread: topics not followed whose stray messages are being unsubscribed ({@link #unfollowStray}). */
    private final java.util.Set<String> unfollowing = new java.util.HashSet<>();
    /** Applier thread: topics the last check found behind → their head after that backfill. */
    private final Map<String, Long> headAfterBackfill = new java.util.HashMap<>();
    /** {@code cluster.idleTopicTimeout} in ms; 0 = follow every loaded topic for good. */
    private final long idleMillis;
    /**
     * Epoch and head of topics no longer followed, the newest {@link #maxTopics}: written by the
     * applier, read by the writer thread too (a publish must still tell Redis what this node saw).
     */
    private final Map<String, Seen> forgotten;

    /** {@code store.retentionCount}: a topic holding more than this may have been trimmed in Redis. */
    private final long retentionCount;
    /** Applier thread: rounds of {@link #refreshOldest}, every tenth looks at every followed topic. */
    private long oldestRounds;

    /**
     * Tests: runs on the applier before each page of a topic's stream a load or backfill reads,
     * with the topic: the moment another node may replace Redis' history of it, between the
     * epoch and the page.
     */
    volatile java.util.function.Consumer<String> beforePageRead = topic -> { };

    /** What this node had applied of a topic (when it stopped following it). */
    record Seen(String epoch, long head) {
    }

    /** Connects to {@code config.cluster()}'s Redis; throws when it cannot be reached now. */
    public RedisHistory(ServerConfig config) {
        timeout = config.cluster().redisTimeout();
        maxTopics = config.limits().maxTopics();
        idleMillis = config.cluster().idleTopicTimeout().toMillis();
        forgotten = java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Seen> eldest) {
                return size() > maxTopics;
            }
        });
        ServerConfig.Store store = config.store();
        retentionCount = store.retentionCount();
        cache = ReplayCache.open(cacheDir(config), store.retentionAge(), store.retentionCount(), store.minFreeBytes(),
                SystemTimeProvider.INSTANCE);
        applier = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "push-redis-apply");
            t.setDaemon(true);
            applierThread = t;
            return t;
        });
        try {
            redis = new RedisLink(config.cluster(), this::onMessage, this::onReconnect);
        } catch (RuntimeException e) {
            applier.shutdownNow();
            if (cache != null) {
                cache.close();
            }
            throw e;
        }
        // A periodic task that throws is never run again (ScheduledThreadPoolExecutor), silently:
        // each is guarded, so one bad round is logged and the next runs.
        applier.scheduleWithFixedDelay(guarded("resync", this::resyncAll), RESYNC_EVERY_MILLIS, RESYNC_EVERY_MILLIS,
                TimeUnit.MILLISECONDS);
        if (idleMillis > 0) {
            applier.scheduleWithFixedDelay(guarded("idle topics", this::unfollowIdle), 1000, 1000,
                    TimeUnit.MILLISECONDS);
        }
        applier.scheduleWithFixedDelay(guarded("oldest refresh", this::refreshOldest), RESYNC_EVERY_MILLIS,
                RESYNC_EVERY_MILLIS, TimeUnit.MILLISECONDS);
        if (cache != null) {
            long every = store.retentionCheckInterval().toMillis();
            applier.scheduleWithFixedDelay(this::enforceCacheRetention, every, every, TimeUnit.MILLISECONDS);
        }
    }

    /** The node's replay cache: {@code <store.dataDir>/cluster-cache} (cluster mode opens no single-node log). */
    static Path cacheDir(ServerConfig config) {
        return Path.of(config.store().dataDir()).resolve("cluster-cache");
    }

    private void enforceCacheRetention() {
        try {
            cache.enforceRetention();
        } catch (RuntimeException e) {
            log.warn("cluster: replay cache retention failed", e);
        }
    }

    /** {@code task}, logging (at most every 10 s) what it throws instead of losing it in a future nobody reads. */
    private Runnable guarded(String what, Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                long now = System.currentTimeMillis();
                if (now - lastTaskFailureLog > 10_000) {
                    lastTaskFailureLog = now;
                    log.warn("cluster: {} failed; the next round retries", what, e);
                }
            }
        };
    }

    /** The fan-out this history feeds; set once, before the server takes connections. */
    public void start(TopicHub hub) {
        this.hub = hub;
    }

    /** The sequencer that stores through this history's Redis. */
    public RedisSequencer sequencer(ServerConfig.Store store) {
        return new RedisSequencer(redis, this, store, timeout, maxTopics);
    }

    /**
     * Loading a topic is a round trip (its epoch, head and oldest): on the applier, never the
     * caller's thread. A subscriber calls this after it registered with the hub: a loaded topic
     * counts as used (see the class comment), one the applier retired meanwhile is loaded again.
     */
    @Override
    public CompletionStage<Void> prepare(String topic) {
        TopicLog t = logs.get(topic);
        if (t != null && t.use(now())) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> load(topic), applier);
    }

    /** Reads Redis' head on the applier and backfills up to it: what another node delivered, this one then holds. */
    @Override
    public CompletionStage<Void> catchUp(String topic, String epoch, long seq) {
        TopicLog known = logs.get(topic);
        if (known != null && known.use(now()) && known.epoch().equals(epoch) && known.head() >= seq) {
            return CompletableFuture.completedFuture(null);
        }
        return CompletableFuture.runAsync(() -> backfill(load(topic)), applier);
    }

    /** Milliseconds of a monotonic clock: when a topic was last used. */
    private static long now() {
        return System.nanoTime() / 1_000_000;
    }

    @Override
    public String epoch(String topic) {
        return log(topic).epoch();
    }

    @Override
    public void append(String topic, long seq, long timestampMillis, String idempotencyKey, byte[] data) {
        // stored by the sequencer's script; applied through the applier (RedisSequencer.reserve)
    }

    @Override
    public void sync() {
        // acknowledged means Redis ran the script (durability: Redis' appendfsync)
    }

    @Override
    public TopicRange range(String topic) {
        return log(topic).range();
    }

    @Override
    public long findByIdempotencyKey(String topic, String key) {
        return -1; // the publish script dedupes (the sequencer storesEvents)
    }

    /**
     * The ring, then the replay cache; {@link #NOT_AT_HAND} when only Redis has them. Never a round
     * trip. The ring checks {@code epoch} under its lock, and the cache serves only runs of
     * {@code epoch}: what is passed is always of the epoch the caller labels it with.
     */
    @Override
    public int read(String topic, String epoch, long afterSeq, int max, EventVisitor visitor) {
        TopicLog t = log(topic);
        int n = t.readCached(epoch, afterSeq, max, visitor);
        if (n != TopicLog.NOT_IN_RING) {
            return n;
        }
        n = cache == null ? ReplayCache.NOT_HELD
                : cache.read(topic, epoch, afterSeq, max, (seq, ts, data) -> visitor.accept(seq, ts, data.toBytes()));
        return n >= 0 ? n : NOT_AT_HAND;
    }

    /** As {@link #read}; from the cache, each event's bytes go straight from the mapped file to the buffer. */
    @Override
    public int readData(String topic, String epoch, long afterSeq, int max, EventDataVisitor visitor) {
        TopicLog t = log(topic);
        int n = t.readCached(epoch, afterSeq, max, (seq, ts, data) -> visitor.accept(seq, ts, EventData.of(data)));
        if (n != TopicLog.NOT_IN_RING) {
            return n;
        }
        n = cache == null ? ReplayCache.NOT_HELD : cache.read(topic, epoch, afterSeq, max, visitor);
        return n >= 0 ? n : NOT_AT_HAND;
    }

    /**
     * What is at hand at once; else one page of the stream, read asynchronously (pipelined with
     * the topic's epoch, which Redis gives after the page: the same epoch means the page is of it),
     * handed to the caller and, on the applier, appended to the replay cache.
     */
    @Override
    public CompletionStage<Fetched> fetch(String topic, long afterSeq, int max) {
        TopicLog known = logs.get(topic);
        if (known == null) { // not loaded yet: loading is a round trip, so off the caller's thread
            return CompletableFuture.supplyAsync(() -> load(topic), applier)
                    .thenCompose(t -> fetch(t, afterSeq, max));
        }
        known.touch(now());
        return fetch(known, afterSeq, max);
    }

    private CompletionStage<Fetched> fetch(TopicLog t, long afterSeq, int max) {
        String topic = t.topic();
        String epoch = t.epoch();
        long head = t.head();
        Fetched.Builder local = new Fetched.Builder(Math.min(max, PAGE));
        int atHand = afterSeq >= head ? 0 : read(topic, epoch, afterSeq, max, local);
        if (atHand == EPOCH_CHANGED) {
            return CompletableFuture.completedFuture(local.build(t.epoch(), 0)); // the caller sees the new epoch
        }
        if (atHand != NOT_AT_HAND) {
            return CompletableFuture.completedFuture(local.build(epoch, max));
        }
        pageReads.increment();
        CompletableFuture<List<StreamMessage<byte[], byte[]>>> page;
        CompletableFuture<byte[]> redisEpoch;
        try {
            var async = redis.commands().async();
            page = async.xrange(RedisKeys.stream(topic), Range.create((afterSeq + 1) + "-0", head + "-0"),
                    Limit.from(Math.min(max, PAGE))).toCompletableFuture();
            redisEpoch = async.hget(RedisKeys.meta(topic), new byte[] {'e'}).toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return page.thenCombine(redisEpoch, (messages, e) -> {
            Fetched.Builder b = new Fetched.Builder(messages.size());
            for (StreamMessage<byte[], byte[]> m : messages) {
                b.accept(seqOf(m.getId()), Long.parseLong(RedisKeys.text(field(m, 't'))), field(m, 'd'));
            }
            return new Object[] {b.build(epoch, b.size()), RedisKeys.text(e)};
        }).orTimeout(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS).thenCompose(r -> {
            Fetched f = (Fetched) r[0];
            if (!epoch.equals(r[1]) || f.size() == 0) {
                // Another history (the applier resets the topic: the caller then says unknown_epoch),
                // or retention took everything asked for (the applier learns what is kept: the caller
                // then says expired). Either way the caller goes on once the applier has looked.
                return CompletableFuture.supplyAsync(() -> {
                    TopicLog current = t.retired() ? log(topic) : t; // retired meanwhile: loaded afresh
                    backfill(current);
                    return f.size() == 0 || !epoch.equals(current.epoch()) ? new Fetched(current.epoch(), new long[0],
                            new long[0], new byte[0][]) : f;
                }, applier);
            }
            if (f.seqs()[0] > afterSeq + 1) {
                // retention took what was asked for first (Redis trims from the front): the
                // node's oldest was stale, as it is refreshed only by a backfill
                applier.execute(() -> {
                    if (epoch.equals(t.epoch()) && !t.retired()) {
                        t.trimmedTo(f.seqs()[0]);
                    }
                });
            }
            if (cache != null) {
                applier.execute(() -> {
                    if (epoch.equals(t.epoch()) && !t.retired()) { // a retired topic caches nothing
                        cache.appendFetched(topic, epoch, f.seqs(), f.timestamps(), f.data());
                    }
                });
            }
            return CompletableFuture.completedFuture(f);
        });
    }

    @Override
    public boolean writable() {
        return redis.isOpen();
    }

    /** Publishes get 503 while Redis cannot be reached: not a full disk (507). */
    @Override
    public String writeState() {
        return writable() ? "writable" : "unreachable";
    }

    @Override
    public boolean fansOutItself() {
        return true;
    }

    /** Topics this node follows. */
    public int topicCount() {
        return logs.size();
    }

    /** The node's replay cache, or null when it could not be opened. */
    public ReplayCache cache() {
        return cache;
    }

    /** Pages read from Redis for replays and history requests since start. */
    public long pageReads() {
        return pageReads.sum();
    }

    /** Publish batches fewer replicas than {@code cluster.replicasToAck} acknowledged in time. */
    public long replicaShortAcks() {
        return redis.shortAcks();
    }

    /** What this node has applied of {@code topic}, or null when it never loaded it. */
    TopicLog known(String topic) {
        return logs.get(topic);
    }

    /**
     * Any thread: the epoch and head this node last applied of {@code topic}, followed now or
     * before it stopped following it, or null when it never loaded it. The publish script compares
     * them with Redis: a Redis holding less of that epoch gets a new one, never an ID given twice.
     * (A retired topic is in {@link #forgotten} before it leaves {@link #logs}, and a loaded one in
     * {@link #logs} before it leaves {@link #forgotten}: one of the two always answers.)
     */
    Seen seen(String topic) {
        TopicLog t = logs.get(topic);
        if (t != null) {
            return new Seen(t.epoch(), t.head());
        }
        return forgotten.get(topic);
    }

    /**
     * Writer thread, before a batch goes to Redis: the topics of {@code publishes} this node must
     * refuse with {@code TopicLimitException}, as a single node does: topics it holds nothing of,
     * beyond {@code limits.maxTopics}, that Redis does not have either (publishing to a topic
     * another node made costs this node nothing: it holds state only of topics it follows). At the
     * limit, one pipelined round of {@code EXISTS} tells; when Redis does not answer, nothing is
     * refused here (the batch gets its 503 from the scripts).
     */
    java.util.Set<String> overTopicLimit(List<String> topics) {
        releasePublishOnly();
        java.util.Set<String> beyond = new java.util.LinkedHashSet<>();
        java.util.Set<String> admitted = new java.util.HashSet<>();
        int room = maxTopics - held.size();
        for (String topic : topics) {
            if (held.contains(topic) || admitted.contains(topic) || beyond.contains(topic)) {
                continue;
            }
            if (room > 0) {
                room--;
                admitted.add(topic);
            } else {
                beyond.add(topic);
            }
        }
        if (beyond.isEmpty()) {
            return java.util.Set.of();
        }
        java.util.Set<String> refused = new java.util.HashSet<>();
        try {
            List<CompletableFuture<Long>> exists = new java.util.ArrayList<>();
            List<String> asked = List.copyOf(beyond);
            for (String topic : asked) {
                exists.add(redis.commands().async().exists(RedisKeys.meta(topic)).toCompletableFuture());
            }
            for (int i = 0; i < asked.size(); i++) {
                if (exists.get(i).get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS) == 0) {
                    refused.add(asked.get(i));
                }
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return java.util.Set.of();
        }
        if (!refused.isEmpty() && !topicLimitLogged) {
            topicLimitLogged = true; // the operator's business once; each refused client gets its 507
            log.warn("{} topics: the limit (limits.maxTopics) is reached; publishes through this node to new topics"
                    + " are refused", held.size());
        }
        return refused;
    }

    /** Writer thread: Redis stored (or answered) a publish to {@code topic} through this node. */
    void published(String topic) {
        held.add(topic);
        if (idleMillis > 0) {
            lastPublished.put(topic, now());
        }
    }

    /**
     * Writer thread, at most once a second: a topic published through this node and not followed
     * here (no local subscriber or read: the applier never loaded it, or retired it) leaves
     * {@code held} once nothing was published to it for {@code cluster.idleTopicTimeout}, as an
     * idle followed topic does; else a node that only publishes would refuse every new topic
     * for good once {@code limits.maxTopics} topics went through it.
     */
    private void releasePublishOnly() {
        long now = now();
        if (idleMillis == 0 || now - lastPublishPrune < 1000) {
            return;
        }
        lastPublishPrune = now;
        for (var it = lastPublished.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (now - e.getValue() < idleMillis) {
                continue;
            }
            String topic = e.getKey();
            held.remove(topic);
            // load() puts the log before it adds to held: a topic loaded meanwhile is seen here
            // and kept; a followed topic stays listed, to be released once the applier retires it
            if (logs.containsKey(topic)) {
                held.add(topic);
            } else {
                it.remove();
            }
        }
    }

    /** From the sequencer, after the script stored it: apply in order with the other nodes' events. */
    void offer(String topic, String epoch, long seq, long ts, byte[] data) {
        try {
            applier.execute(guarded("applying a live event", () -> apply(topic, epoch, seq, ts, data)));
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            // a message Redis sent while this node shuts down: nobody is left to deliver it to,
            // and the stream in Redis still holds it for whoever resumes elsewhere
        }
    }

    /** Tests: the node's connections to Redis. */
    RedisLink link() {
        return redis;
    }

    /** The node's topic state, loaded from Redis on first use (on the applier, so it is ordered with events). */
    private TopicLog log(String topic) {
        TopicLog t = logs.get(topic);
        if (t != null) {
            t.touch(now());
            return t;
        }
        if (Thread.currentThread() == applierThread) {
            return load(topic);
        }
        try {
            return applier.submit(() -> load(topic)).get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted loading topic " + topic, e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("loading topic " + topic + " timed out", e);
        }
    }

    private TopicLog load(String topic) {
        TopicLog existing = logs.get(topic);
        if (existing != null) {
            return existing;
        }
        // subscribe first, then read the head: an event stored in between is both heard and read
        // (the applier drops the copy), none falls between the two
        redis.follow(topic, timeout.toMillis() + 1000);
        Seen seen = forgotten.get(topic); // followed before: Redis holding less of it means a new epoch
        String epoch;
        long head;
        long oldest;
        for (int attempt = 1; ; attempt++) {
            List<Object> meta = redis.ensureEpoch(topic, seen == null ? "" : seen.epoch(), seen == null ? 0 : seen.head());
            epoch = RedisKeys.text(meta.get(0));
            head = Long.parseLong(RedisKeys.text(meta.get(1)));
            if (head == 0) {
                oldest = 0;
                break;
            }
            // the oldest kept with the epoch right after it, as a backfill's pages: else the
            // oldest of a history that replaced this one meanwhile would be named in this epoch
            Page first = readPage(topic, Range.unbounded(), 1);
            if (epoch.equals(first.epoch())) {
                oldest = first.messages().isEmpty() ? 0 : seqOf(first.messages().get(0).getId());
                break;
            }
            if (attempt == 3) {
                throw new IllegalStateException("topic " + topic + ": Redis replaced its history during "
                        + attempt + " loads in a row");
            }
        }
        TopicLog t = new TopicLog(topic, cache == null ? RING : HOT_TAIL, epoch, head, oldest);
        t.touch(now());
        logs.put(topic, t);
        forgotten.remove(topic); // after the put: seen() finds one of the two
        held.add(topic);
        return t;
    }

    /**
     * Applier thread, once a second: stops following topics no local subscriber and no local read
     * used for {@code cluster.idleTopicTimeout}. A topic with subscribers counts as used now, so its
     * idle time starts when the last one leaves.
     */
    private void unfollowIdle() {
        TopicHub h = hub;
        if (h == null || !redis.isOpen()) {
            return; // unsubscribing needs Redis; the topics stay followed until it is back
        }
        long now = now();
        long before = now - idleMillis;
        int dropped = 0;
        for (TopicLog t : List.copyOf(logs.values())) {
            String topic = t.topic();
            if (h.subscriberCount(topic) > 0) {
                t.touch(now);
            } else if (t.retireIfUnused(before, () -> h.subscriberCount(topic) == 0)) {
                forgotten.put(topic, new Seen(t.epoch(), t.head())); // before the remove: seen() finds one of the two
                logs.remove(topic); // from now on its events are dropped here (apply) and read from Redis on next use
                held.remove(topic);
                headAfterBackfill.remove(topic);
                if (cache != null) {
                    cache.drop(topic); // what it holds would not be checked against Redis when loaded again
                }
                try {
                    redis.unfollow(topic).whenComplete((v, e) -> {
                        if (e != null) {
                            log.debug("cluster: unsubscribing from idle topic {} failed ({})", topic, e.toString());
                        }
                    });
                } catch (RuntimeException e) { // routed by slot on a Redis Cluster: may throw at once
                    log.debug("cluster: unsubscribing from idle topic {} failed ({})", topic, e.toString());
                }
                dropped++;
            }
        }
        if (dropped > 0) {
            log.debug("cluster: {} idle topics no longer followed (cluster.idleTopicTimeout), {} followed", dropped,
                    logs.size());
        }
    }

    private void onMessage(byte[] channel, byte[] message) {
        String topic = RedisKeys.topicOfChannel(channel);
        if (topic == null) {
            return; // not ours; a topic still loading gets its events after the load (both on the applier)
        }
        int a = indexOf(message, 0);
        int b = indexOf(message, a + 1);
        int c = indexOf(message, b + 1);
        if (a < 0 || b < 0 || c < 0) {
            return;
        }
        String epoch = new String(message, 0, a, StandardCharsets.UTF_8);
        long seq = Long.parseLong(new String(message, a + 1, b - a - 1, StandardCharsets.UTF_8));
        long ts = Long.parseLong(new String(message, b + 1, c - b - 1, StandardCharsets.UTF_8));
        byte[] data = java.util.Arrays.copyOfRange(message, c + 1, message.length);
        try {
            applier.execute(guarded("applying a live event", () -> {
                if (logs.containsKey(topic)) {
                    apply(topic, epoch, seq, ts, data);
                } else {
                    unfollowStray(topic);
                }
            }));
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            // shutting down: see offer
        }
    }

    /**
     * Applier thread: a message of a topic this node does not follow. An unsubscribe refused
     * while the pub/sub connection was down (REJECT_COMMANDS) never reached Redis, so Lettuce,
     * which forgets a channel only when Redis confirms, subscribes to it again on reconnect: the
     * node would hear every event of the topic for good. Its first message unsubscribes it (a
     * topic loading now cannot be one: load runs on this thread, before its messages are taken).
     */
    private void unfollowStray(String topic) {
        if (!unfollowing.add(topic)) {
            return; // one unsubscribe at a time, not one per message in flight
        }
        CompletableFuture<Void> done;
        try {
            done = redis.unfollow(topic);
        } catch (RuntimeException e) {
            done = CompletableFuture.failedFuture(e);
        }
        done.whenComplete((v, e) -> {
            try {
                applier.execute(() -> unfollowing.remove(topic)); // refused: the next message tries again
            } catch (java.util.concurrent.RejectedExecutionException closing) {
                // shutting down
            }
        });
    }

    /** Applier thread. */
    private void apply(String topic, String epoch, long seq, long ts, byte[] data) {
        TopicLog t = logs.get(topic);
        if (t == null) {
            return;
        }
        if (epoch.equals(t.epoch())) {
            long head = t.head();
            if (seq <= head) {
                return; // already applied (our own publish came back, or a backfill had it)
            }
            if (seq == head + 1) {
                fanOut(t, seq, ts, data);
                return;
            }
        }
        backfill(t); // a hole, or another epoch: the stream has everything in order
    }

    private void fanOut(TopicLog t, long seq, long ts, byte[] data) {
        if (cache != null) {
            cache.append(t.topic(), t.epoch(), seq, ts, data); // false (not cached): the ring, then Redis serve it
        }
        t.add(seq, ts, data); // before the fan-out: a subscriber that falls back to reading finds it
        TopicHub h = hub;
        if (h != null) {
            h.fanOut(t.topic(), seq, ts, data, System.nanoTime());
        }
    }

    /** Applier thread: brings {@code t} up to Redis' head, in pages, changing its epoch if Redis did. */
    private void backfill(TopicLog t) {
        for (int attempt = 1; !backfillOnce(t); attempt++) {
            if (attempt == 3) { // Redis replaced the topic's history three times meanwhile: let the next round try
                throw new IllegalStateException("topic " + t.topic() + ": Redis replaced its history during "
                        + attempt + " backfills in a row");
            }
        }
    }

    /**
     * One backfill; false when Redis' history of the topic was replaced after the epoch was read
     * (another node lost it and started a new epoch): then the page read is not applied, and the
     * caller starts again from the epoch. Each page is read with the epoch Redis holds right after
     * it (pipelined, in order on one connection; the scripts replace epoch and stream in one
     * step): the same epoch then means the page is of it.
     */
    private boolean backfillOnce(TopicLog t) {
        if (t.retired()) {
            return true; // no longer followed (a late fetch): the next load reads the head afresh
        }
        String topic = t.topic();
        List<Object> meta = redis.ensureEpoch(topic, t.epoch(), t.head());
        String epoch = RedisKeys.text(meta.get(0));
        long redisHead = Long.parseLong(RedisKeys.text(meta.get(1)));
        if (!epoch.equals(t.epoch())) {
            log.warn("topic {}: Redis holds another history (epoch {} → {}); its clients get reset unknown_epoch",
                    topic, t.epoch(), epoch);
            t.reset(epoch);
            if (cache != null) {
                cache.drop(topic); // never serve the old epoch's events as the new one's
            }
            TopicHub h = hub;
            if (h != null) {
                h.historyReplaced(topic); // a quiet topic's clients would otherwise hear of it with its next event
            }
        }
        while (t.head() < redisHead) {
            Page page = readPage(topic, Range.create((t.head() + 1) + "-0", redisHead + "-0"), PAGE);
            if (!epoch.equals(page.epoch())) {
                return false;
            }
            if (page.messages().isEmpty()) {
                t.keptFrom(0); // retention took them: readers see expired, never a silent hole
                t.add(redisHead, 0, null);
                break;
            }
            for (StreamMessage<byte[], byte[]> m : page.messages()) {
                fanOut(t, seqOf(m.getId()), Long.parseLong(RedisKeys.text(field(m, 't'))), field(m, 'd'));
            }
        }
        if (t.head() == 0) {
            t.keptFrom(0);
            return true;
        }
        Page first = readPage(topic, Range.unbounded(), 1);
        if (!epoch.equals(first.epoch())) {
            return false; // the oldest of another history
        }
        t.keptFrom(first.messages().isEmpty() ? 0 : seqOf(first.messages().get(0).getId()));
        return true;
    }

    /** Entries of a topic's stream and the epoch Redis holds right after reading them. */
    private record Page(List<StreamMessage<byte[], byte[]>> messages, String epoch) {
    }

    private Page readPage(String topic, Range<String> range, int count) {
        beforePageRead.accept(topic);
        var async = redis.commands().async();
        CompletableFuture<List<StreamMessage<byte[], byte[]>>> messages =
                async.xrange(RedisKeys.stream(topic), range, Limit.from(count)).toCompletableFuture();
        CompletableFuture<byte[]> epoch = async.hget(RedisKeys.meta(topic), new byte[] {'e'}).toCompletableFuture();
        try {
            long millis = timeout.toMillis() + 1000;
            return new Page(messages.get(millis, TimeUnit.MILLISECONDS),
                    RedisKeys.text(epoch.get(millis, TimeUnit.MILLISECONDS)));
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted reading topic " + topic, e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("reading topic " + topic + " from Redis timed out", e);
        }
    }

    /** Any connection to Redis (re)connected: once for a burst of them, follow every topic again, then backfill. */
    private void onReconnect() {
        if (reconnectPending.compareAndSet(false, true)) {
            applier.execute(guarded("following every topic again after a reconnect", () -> {
                reconnectPending.set(false);
                if (redis.refollow(List.copyOf(logs.keySet()), timeout.toMillis() + 1000) > 0) {
                    log.debug("cluster: some topics could not be subscribed again yet; the next reconnect retries");
                }
                resyncAll();
            }));
        }
    }

    /**
     * Applier thread: after a reconnect, and once a second, for a lost message with nothing after
     * it. One pipelined round reads every followed topic's meta; only a topic Redis is ahead of (or
     * holds another history of) is backfilled.
     */
    private void resyncAll() {
        if (!redis.isOpen()) {
            return;
        }
        List<TopicLog> all = List.copyOf(logs.values());
        try {
            List<List<KeyValue<byte[], byte[]>>> metas =
                    redis.metas(all.stream().map(TopicLog::topic).toList(), timeout.toMillis());
            List<TopicLog> behind = new java.util.ArrayList<>();
            List<String> deaf = new java.util.ArrayList<>();
            for (int i = 0; i < all.size(); i++) {
                TopicLog t = all.get(i);
                var meta = metas.get(i);
                String epoch = meta.get(0).hasValue() ? RedisKeys.text(meta.get(0).getValue()) : null;
                long head = meta.get(1).hasValue() ? Long.parseLong(RedisKeys.text(meta.get(1).getValue())) : 0;
                if (epoch == null || !epoch.equals(t.epoch()) || head != t.head()) {
                    behind.add(t);
                    Long before = headAfterBackfill.get(t.topic());
                    if (before != null && before == t.head()) {
                        deaf.add(t.topic());
                    }
                } else {
                    headAfterBackfill.remove(t.topic());
                }
            }
            // Behind twice with not one live event applied in between (events in flight make a
            // topic behind for a moment; this is a second of silence while Redis moved on): on a
            // Redis Cluster its shard channel may have moved (failover, resharding) with no
            // reconnect here to tell. Subscribe again, then backfill.
            redis.refollow(deaf, timeout.toMillis() + 1000);
            for (TopicLog t : behind) {
                try { // one topic that cannot be backfilled must not hold back the others
                    backfill(t);
                    headAfterBackfill.put(t.topic(), t.head());
                } catch (RuntimeException e) {
                    long now = System.currentTimeMillis();
                    if (now - lastFailureLog > 10_000) {
                        lastFailureLog = now;
                        log.warn("cluster: backfill of topic {} from Redis failed ({}); retrying", t.topic(), e.toString());
                    }
                }
            }
        } catch (RuntimeException e) {
            long now = System.currentTimeMillis();
            if (now - lastFailureLog > 10_000) { // once per outage, not per topic and second
                lastFailureLog = now;
                log.warn("cluster: backfill from Redis failed ({}); retrying", e.toString());
            }
        }
    }

    /**
     * Applier thread, once a second: the publish scripts trim the streams (MAXLEN ~, the age trim)
     * without a word to the nodes, and events arriving in order never move a log's oldest; so
     * 'subscribed', the topic's GET and a history request would name an oldest Redis no longer
     * has. One pipelined round of {@code XRANGE - + COUNT 1}: each second for topics holding more
     * than {@code store.retentionCount} (count trim), every ten seconds for all (age trim).
     */
    private void refreshOldest() {
        try {
            if (!redis.isOpen()) {
                return;
            }
            boolean all = ++oldestRounds % 10 == 0;
            List<TopicLog> asked = new java.util.ArrayList<>();
            List<CompletableFuture<List<StreamMessage<byte[], byte[]>>>> firsts = new java.util.ArrayList<>();
            for (TopicLog t : logs.values()) {
                TopicRange r = t.range();
                if (r.oldest() > 0 && (all || r.head() - r.oldest() + 1 > retentionCount)) {
                    asked.add(t);
                    firsts.add(redis.commands().async().xrange(RedisKeys.stream(t.topic()), Range.unbounded(),
                            Limit.from(1)).toCompletableFuture());
                }
            }
            for (int i = 0; i < asked.size(); i++) {
                List<StreamMessage<byte[], byte[]>> first =
                        firsts.get(i).get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
                TopicLog t = asked.get(i);
                if (!first.isEmpty() && !t.retired()) {
                    t.trimmedTo(seqOf(first.get(0).getId())); // another epoch's stream: its backfill resets
                }
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.debug("cluster: reading the oldest kept events failed ({}); the next round retries", e.toString());
        }
    }

    private static long seqOf(String streamId) {
        return Long.parseLong(streamId.substring(0, streamId.indexOf('-')));
    }

    private static byte[] field(StreamMessage<byte[], byte[]> m, char name) {
        for (Map.Entry<byte[], byte[]> e : m.getBody().entrySet()) {
            if (e.getKey().length == 1 && e.getKey()[0] == name) {
                return e.getValue();
            }
        }
        throw new IllegalStateException("stream entry " + m.getId() + " without field " + name);
    }

    private static int indexOf(byte[] b, int from) {
        for (int i = Math.max(0, from); i < b.length; i++) {
            if (b[i] == ' ') {
                return i;
            }
        }
        return -1;
    }

    @Override
    public void close() {
        applier.shutdownNow();
        try {
            applier.awaitTermination(2, TimeUnit.SECONDS); // the cache's writer is the applier
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        redis.close();
        if (cache != null) {
            cache.close();
        }
    }
}
