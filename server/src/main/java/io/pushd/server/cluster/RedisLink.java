package io.pushd.server.cluster;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.event.connection.ConnectionActivatedEvent;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.pushd.server.config.Cluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's three connections to Redis: one for the publish scripts and their {@code WAIT}, one
 * for every other command (reads, loads, backfills, meta; pipelined by Lettuce) and one for
 * pub/sub. Publishes have their own because Redis blocks the whole connection while a {@code
 * WAIT} waits for replicas ({@code cluster.replicasAckTimeout} when one is gone), and the
 * {@code WAIT} must go out on the connection that did the writes; on a Redis Cluster each is a
 * connection per master. All reconnect by themselves; while Redis is away commands fail at once
 * instead of queueing, so a publish gets its 503 instead of a hang.
 *
 * <p>Pub/sub is per topic: a node subscribes to the channel of each topic it follows ({@link
 * #follow}), not to a pattern, so a node hears only what its clients asked for. On a Redis Cluster
 * ({@code redis-cluster://}) the channel is a shard channel ({@code SSUBSCRIBE}, published with
 * {@code SPUBLISH} by the script): it lives on the master that holds the topic's keys (same hash
 * tag), and a publish is not broadcast to every master, as classic pub/sub on a cluster is. Plain
 * Redis and Sentinel keep classic {@code SUBSCRIBE}: Lettuce has resubscribed those after a
 * reconnect for years, while its shard-channel resubscribe is young (lettuce#2940, fixed in 6.5).
 */
final class RedisLink implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisLink.class);
    /** Sharded pub/sub ({@code SSUBSCRIBE}/{@code SPUBLISH}) and the scripts' {@code XTRIM MINID} need 7.0. */
    static final int MIN_MAJOR_VERSION = 7;

    /** The commands this class and its callers use, on plain Redis and on a Redis Cluster alike. */
    interface Commands {
        RedisClusterCommands<byte[], byte[]> sync();

        RedisClusterAsyncCommands<byte[], byte[]> async();
    }

    /**
     * Redis answers but cannot serve this daemon (too old): like a bad key, fatal at start. A
     * command error, as a refused login is: both are Redis' answer, not its absence.
     */
    static final class Unusable extends io.lettuce.core.RedisCommandExecutionException {
        Unusable(String message) {
            super(message);
        }
    }

    private final ClientResources resources;
    private final AbstractRedisClient client;
    private final StatefulConnection<byte[], byte[]> connection;
    private final Commands commands;
    /** The publish scripts and their WAIT only: a WAIT blocks its connection in Redis. */
    private final StatefulConnection<byte[], byte[]> publishing;
    private final RedisClusterAsyncCommands<byte[], byte[]> publishCommands;
    /** Non-null on a Redis Cluster: {@link #publishing}; WAIT goes to each master a batch wrote to. */
    private final StatefulRedisClusterConnection<byte[], byte[]> clusterPublishing;
    private final StatefulRedisPubSubConnection<byte[], byte[]> pubSub;
    private final boolean sharded;
    private final byte[] publishCommand;
    private final int replicasToAck;
    private final long replicasAckTimeoutMillis;
    private final java.util.concurrent.atomic.LongAdder shortAcks = new java.util.concurrent.atomic.LongAdder();
    private volatile long lastShortAckLog;
    private volatile String publishSha;
    private volatile String ensureSha;
    private final reactor.core.Disposable reconnects;

    /** Connects, or throws when Redis cannot be reached or used now. */
    RedisLink(Cluster config, BiConsumer<byte[], byte[]> onMessage, Runnable onReconnect) {
        // Reconnect attempts at most a second apart: Lettuce's default backs off to 30 s, longer
        // than the clients' retry hints, so a restarted Redis would sit unused.
        resources = DefaultClientResources.builder()
                .reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                .build();
        sharded = config.redisCluster();
        publishCommand = RedisKeys.bytes(sharded ? "SPUBLISH" : "PUBLISH");
        replicasToAck = config.replicasToAck();
        replicasAckTimeoutMillis = config.replicasAckTimeout().toMillis();
        StatefulRedisClusterConnection<byte[], byte[]> cc = null;
        StatefulRedisClusterConnection<byte[], byte[]> clusterPub = null;
        RedisClusterAsyncCommands<byte[], byte[]> pubAsync = null;
        StatefulConnection<byte[], byte[]> conn = null;
        StatefulConnection<byte[], byte[]> pub = null;
        StatefulRedisPubSubConnection<byte[], byte[]> ps = null;
        if (sharded) {
            RedisClusterClient c = RedisClusterClient.create(resources, config.seeds());
            c.setOptions(ClusterClientOptions.builder()
                    .autoReconnect(true)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .timeoutOptions(TimeoutOptions.enabled(config.redisTimeout()))
                    // a failover or resharding moves slots: MOVED/ASK and lost nodes refresh the map
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enableAllAdaptiveRefreshTriggers().enablePeriodicRefresh(Duration.ofSeconds(30)).build())
                    .build());
            client = c;
        } else {
            RedisClient c = RedisClient.create(resources, config.uri());
            c.setOptions(ClientOptions.builder()
                    .autoReconnect(true)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .timeoutOptions(TimeoutOptions.enabled(config.redisTimeout()))
                    .build());
            client = c;
        }
        try {
            if (client instanceof RedisClusterClient c) {
                cc = c.connect(ByteArrayCodec.INSTANCE);
                cc.setTimeout(config.redisTimeout());
                conn = cc;
                var sync = cc.sync();
                var async = cc.async();
                commands = new Commands() {
                    public RedisClusterCommands<byte[], byte[]> sync() {
                        return sync;
                    }

                    public RedisClusterAsyncCommands<byte[], byte[]> async() {
                        return async;
                    }
                };
                for (RedisClusterNode node : cc.getPartitions()) {
                    RedisURI u = node.getUri();
                    checkVersion(cc.getConnection(u.getHost(), u.getPort()).sync().info("server"), u.getHost() + ":" + u.getPort());
                }
                StatefulRedisClusterConnection<byte[], byte[]> pcc = c.connect(ByteArrayCodec.INSTANCE);
                pcc.setTimeout(config.redisTimeout());
                pub = pcc;
                clusterPub = pcc;
                // connect to every master now: a per-node connection still connecting rejects the
                // scripts (REJECT_COMMANDS), so the first publishes would get 503
                for (RedisClusterNode node : pcc.getPartitions()) {
                    if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                        pcc.getConnection(node.getUri().getHost(), node.getUri().getPort());
                    }
                }
                pubAsync = pcc.async();
                StatefulRedisClusterPubSubConnection<byte[], byte[]> cps = c.connectPubSub(ByteArrayCodec.INSTANCE);
                // shard messages arrive on the connection to the slot's master, not on this one
                cps.setNodeMessagePropagation(true);
                cps.addListener(new RedisClusterPubSubAdapter<>() {
                    @Override
                    public void smessage(RedisClusterNode node, byte[] channel, byte[] message) {
                        onMessage.accept(channel, message);
                    }
                });
                // Connect to every master now: a shard subscription goes to the slot's master over a
                // connection of its own, and one still connecting rejects it (REJECT_COMMANDS)
                for (RedisClusterNode node : cps.getPartitions()) {
                    if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                        cps.getConnection(node.getUri().getHost(), node.getUri().getPort());
                    }
                }
                ps = cps;
            } else {
                StatefulRedisConnection<byte[], byte[]> sc = ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
                sc.setTimeout(config.redisTimeout());
                conn = sc;
                var sync = sc.sync();
                var async = sc.async();
                commands = new Commands() {
                    public RedisClusterCommands<byte[], byte[]> sync() {
                        return sync;
                    }

                    public RedisClusterAsyncCommands<byte[], byte[]> async() {
                        return async;
                    }
                };
                checkVersion(sc.sync().info("server"), "");
                StatefulRedisConnection<byte[], byte[]> psc = ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
                psc.setTimeout(config.redisTimeout());
                pub = psc;
                pubAsync = psc.async();
                ps = ((RedisClient) client).connectPubSub(ByteArrayCodec.INSTANCE);
                ps.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(byte[] channel, byte[] message) {
                        onMessage.accept(channel, message);
                    }
                });
            }
            connection = conn;
            publishing = pub;
            publishCommands = pubAsync;
            clusterPublishing = clusterPub;
            pubSub = ps;
            loadScripts();
        } catch (RuntimeException e) {
            if (ps != null) {
                ps.close();
            }
            if (pub != null) {
                pub.close();
            }
            if (conn != null) {
                conn.close();
            }
            client.shutdown(0, 2, TimeUnit.SECONDS);
            resources.shutdown(0, 2, TimeUnit.SECONDS);
            throw e;
        }
        // A reconnect may have lost pub/sub messages: the history resubscribes and backfills.
        reconnects = client.getResources().eventBus().get().subscribe(e -> {
            if (e instanceof ConnectionActivatedEvent) {
                onReconnect.run();
            }
        }, e -> log.debug("cluster: Redis event stream ended", e));
        log.info("cluster mode: connected to {} at {}", sharded ? "the Redis Cluster" : "Redis",
                Cluster.redacted(config.redisUri()));
    }

    /** Refuses a Redis older than 7 with one line naming its version ({@code INFO server}). */
    static void checkVersion(String infoServer, String where) {
        String version = null;
        for (String line : infoServer.split("\\r?\\n")) {
            if (line.startsWith("redis_version:")) {
                version = line.substring("redis_version:".length()).trim();
            }
        }
        int major;
        try {
            major = Integer.parseInt(version.substring(0, version.indexOf('.')));
        } catch (RuntimeException e) {
            throw new Unusable("INFO server has no redis_version (expected: Redis " + MIN_MAJOR_VERSION + ".0 or newer)");
        }
        if (major < MIN_MAJOR_VERSION) {
            throw new Unusable("Redis " + version + (where.isEmpty() ? "" : " at " + where) + " is too old (expected: "
                    + MIN_MAJOR_VERSION + ".0 or newer, for sharded pub/sub and XTRIM MINID)");
        }
    }

    /** After a Redis restart its script cache is empty: load again (NOSCRIPT). On a cluster, every master. */
    void loadScripts() {
        publishSha = commands.sync().scriptLoad(RedisKeys.bytes(Scripts.PUBLISH));
        ensureSha = commands.sync().scriptLoad(RedisKeys.bytes(Scripts.ENSURE_EPOCH));
    }

    boolean isOpen() {
        return connection.isOpen();
    }

    Commands commands() {
        return commands;
    }

    /** {@code PUBLISH} or, on a Redis Cluster, {@code SPUBLISH}: the script's last argument. */
    byte[] publishCommand() {
        return publishCommand;
    }

    /**
     * Subscribes to {@code topic}'s channel and waits for Redis to confirm, so an event stored
     * after this returns is heard here (what was stored before, the caller reads from the stream).
     * Subscribing again to a channel already subscribed is a no-op in Redis.
     */
    void follow(String topic, long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            try {
                followAsync(topic).orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).join();
                return;
            } catch (RuntimeException e) {
                // a master's connection (new after a failover, or reconnecting) rejects commands
                // until it is up: try again briefly rather than fail the reader at once
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    CompletableFuture<Void> followAsync(String topic) {
        byte[] channel = RedisKeys.channel(topic);
        return (sharded ? pubSub.async().ssubscribe(channel) : pubSub.async().subscribe(channel)).toCompletableFuture();
    }

    /**
     * Unsubscribes from {@code topic}'s channel (a topic no longer followed). Not awaited: a later
     * {@link #follow} goes out on the same connection after it, and a message that still arrives
     * meanwhile is dropped by the history (it follows no such topic).
     */
    CompletableFuture<Void> unfollow(String topic) {
        byte[] channel = RedisKeys.channel(topic);
        return (sharded ? pubSub.async().sunsubscribe(channel) : pubSub.async().unsubscribe(channel)).toCompletableFuture();
    }

    /**
     * After a reconnect on a Redis Cluster: subscribe to every followed topic again, one command
     * each. Lettuce resubscribes a node's shard channels in one {@code SSUBSCRIBE}, which Redis
     * refuses with CROSSSLOT as soon as they hash to two slots; plain Redis needs none of this.
     * Returns how many were refused (Redis still away: the next reconnect tries again).
     */
    int refollow(Collection<String> topics, long timeoutMillis) {
        if (!sharded) {
            return 0;
        }
        List<CompletableFuture<Void>> calls = new ArrayList<>(topics.size());
        for (String t : topics) {
            try {
                calls.add(followAsync(t));
            } catch (RuntimeException e) {
                calls.add(CompletableFuture.failedFuture(e));
            }
        }
        int failed = 0;
        for (CompletableFuture<Void> c : calls) {
            try {
                c.get(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                failed++;
            }
        }
        return failed;
    }

    /**
     * {@code cluster.replicasToAck} > 0: after a batch Redis stored, wait for that many replicas.
     * Fewer in time (or the WAIT failing) does not change the answer: Redis ran the scripts, the
     * events have their IDs and may already be delivered, and WAIT cannot undo a write; a 503 would
     * only make a publisher without an Idempotency-Key publish a second copy. So it is counted
     * ({@link #shortAcks}, metric {@code push.cluster.replicas.short}) and logged at most every 10 s.
     */
    void awaitReplicas(Collection<String> topics) {
        if (replicasToAck == 0 || topics.isEmpty()) {
            return;
        }
        long acked;
        try {
            acked = waitForReplicas(topics, replicasToAck, replicasAckTimeoutMillis);
        } catch (RuntimeException e) {
            acked = -1;
        }
        if (acked < replicasToAck) {
            shortAcks.increment();
            long now = System.currentTimeMillis();
            if (now - lastShortAckLog > 10_000) {
                lastShortAckLog = now;
                log.warn("cluster: a publish batch was acknowledged by {} of {} replicas within {} ms"
                        + " (cluster.replicasToAck); answered as stored, counted in push.cluster.replicas.short",
                        Math.max(acked, 0), replicasToAck, replicasAckTimeoutMillis);
            }
        }
    }

    /** Publish batches fewer replicas than {@code cluster.replicasToAck} acknowledged in time, since start. */
    long shortAcks() {
        return shortAcks.sum();
    }

    /**
     * {@code WAIT replicas timeout} after a batch: the fewest replicas that acknowledged the
     * batch's writes on any master it wrote to. Plain Redis: one WAIT on the publish connection
     * (the one that ran the scripts). A Redis Cluster: one per master of the batch's topics, each
     * on the connection Lettuce routed the scripts through (the same per-node connection).
     */
    long waitForReplicas(Collection<String> topics, int replicas, long timeoutMillis) {
        List<CompletableFuture<Long>> calls = new ArrayList<>();
        if (clusterPublishing == null) {
            calls.add(publishCommands.waitForReplication(replicas, timeoutMillis).toCompletableFuture());
        } else {
            Map<String, RedisURI> masters = new LinkedHashMap<>();
            for (String t : topics) {
                RedisClusterNode node = clusterPublishing.getPartitions().getMasterBySlot(SlotHash.getSlot(RedisKeys.meta(t)));
                if (node != null) {
                    masters.putIfAbsent(node.getNodeId(), node.getUri());
                }
            }
            for (RedisURI u : masters.values()) {
                calls.add(clusterPublishing.getConnection(u.getHost(), u.getPort()).async()
                        .waitForReplication(replicas, timeoutMillis).toCompletableFuture());
            }
        }
        long fewest = Long.MAX_VALUE;
        for (CompletableFuture<Long> c : calls) {
            fewest = Math.min(fewest, c.orTimeout(timeoutMillis + 1000, TimeUnit.MILLISECONDS).join());
        }
        return fewest == Long.MAX_VALUE ? replicas : fewest;
    }

    /** Runs the publish script without waiting (Lettuce pipelines the calls of a batch), on the publish connection. */
    CompletableFuture<List<Object>> publish(byte[][] keys, byte[]... args) {
        return publishCommands.<List<Object>>evalsha(publishSha, ScriptOutputType.MULTI, keys, args)
                .toCompletableFuture();
    }

    /** {epoch, head} of a topic, making an epoch when needed (see {@link Scripts#ENSURE_EPOCH}). */
    List<Object> ensureEpoch(String topic, String seenEpoch, long seenHead) {
        return withScripts(() -> commands.sync().evalsha(ensureSha, ScriptOutputType.MULTI,
                new byte[][] {RedisKeys.meta(topic), RedisKeys.stream(topic)},
                RedisKeys.bytes(RedisKeys.newEpoch()), RedisKeys.bytes(seenEpoch), RedisKeys.bytes(Long.toString(seenHead))));
    }

    /** {epoch, seq} of each topic's meta hash (nulls when missing), one pipelined round for all. */
    List<List<io.lettuce.core.KeyValue<byte[], byte[]>>> metas(List<String> topics, long timeoutMillis) {
        List<CompletableFuture<List<io.lettuce.core.KeyValue<byte[], byte[]>>>> calls = new java.util.ArrayList<>();
        for (String t : topics) {
            calls.add(commands.async().hmget(RedisKeys.meta(t), new byte[] {'e'}, new byte[] {'s'}).toCompletableFuture());
        }
        List<List<io.lettuce.core.KeyValue<byte[], byte[]>>> out = new java.util.ArrayList<>(calls.size());
        for (CompletableFuture<List<io.lettuce.core.KeyValue<byte[], byte[]>>> c : calls) {
            out.add(c.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).join());
        }
        return out;
    }

    <T> T withScripts(Supplier<T> call) {
        try {
            return call.get();
        } catch (RedisNoScriptException e) {
            loadScripts();
            return call.get();
        }
    }

    @Override
    public void close() {
        reconnects.dispose();
        pubSub.close();
        publishing.close();
        connection.close();
        client.shutdown(0, 2, TimeUnit.SECONDS);
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}
