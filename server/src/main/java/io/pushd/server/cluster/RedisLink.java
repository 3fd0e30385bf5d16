package io.pushd.server.cluster;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.event.connection.ConnectionActivatedEvent;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import io.pushd.server.config.Cluster;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's two connections to Redis: one for commands (scripts and reads, pipelined by Lettuce)
 * and one for pub/sub. Both reconnect by themselves (Lettuce re-subscribes); while Redis is away
 * commands fail at once instead of queueing, so a publish gets its 503 instead of a hang.
 */
final class RedisLink implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisLink.class);

    private final ClientResources resources;
    private final RedisClient client;
    private final StatefulRedisConnection<byte[], byte[]> commands;
    private final StatefulRedisPubSubConnection<byte[], byte[]> pubSub;
    private volatile String publishSha;
    private volatile String ensureSha;
    private final reactor.core.Disposable reconnects;

    /** Connects, or throws when Redis cannot be reached now. */
    RedisLink(Cluster config, BiConsumer<byte[], byte[]> onMessage, Runnable onReconnect) {
        // Reconnect attempts at most a second apart: Lettuce's default backs off to 30 s, longer
        // than the clients' retry hints, so a restarted Redis would sit unused.
        resources = DefaultClientResources.builder()
                .reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                .build();
        client = RedisClient.create(resources, config.uri());
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(config.redisTimeout()))
                .build());
        try {
            commands = client.connect(ByteArrayCodec.INSTANCE);
            commands.setTimeout(config.redisTimeout());
            pubSub = client.connectPubSub(ByteArrayCodec.INSTANCE);
            pubSub.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(byte[] pattern, byte[] channel, byte[] message) {
                    onMessage.accept(channel, message);
                }
            });
            pubSub.sync().psubscribe(RedisKeys.bytes(RedisKeys.CHANNEL_PATTERN));
            loadScripts();
        } catch (RuntimeException e) {
            client.shutdown(0, 2, TimeUnit.SECONDS);
            resources.shutdown(0, 2, TimeUnit.SECONDS);
            throw e;
        }
        // A reconnect may have lost pub/sub messages: the history backfills from the streams.
        reconnects = client.getResources().eventBus().get().subscribe(e -> {
            if (e instanceof ConnectionActivatedEvent) {
                onReconnect.run();
            }
        }, e -> log.debug("cluster: Redis event stream ended", e));
        log.info("cluster mode: connected to Redis at {}", Cluster.redacted(config.redisUri()));
    }

    /** After a Redis restart its script cache is empty: load again (NOSCRIPT). */
    void loadScripts() {
        publishSha = commands.sync().scriptLoad(Scripts.PUBLISH);
        ensureSha = commands.sync().scriptLoad(Scripts.ENSURE_EPOCH);
    }

    boolean isOpen() {
        return commands.isOpen();
    }

    StatefulRedisConnection<byte[], byte[]> commands() {
        return commands;
    }

    /** Runs the publish script without waiting (Lettuce pipelines the calls of a batch). */
    CompletableFuture<List<Object>> publish(byte[][] keys, byte[]... args) {
        return commands.async().<List<Object>>evalsha(publishSha, ScriptOutputType.MULTI, keys, args)
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
        commands.close();
        client.shutdown(0, 2, TimeUnit.SECONDS);
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}
