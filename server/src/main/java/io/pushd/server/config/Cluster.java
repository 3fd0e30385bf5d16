package io.pushd.server.config;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import io.lettuce.core.RedisURI;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Cluster mode: several nodes behind one plain balancer share one history in Redis. Off by default
 * ({@code redisUri} empty): the daemon is a single node with nothing external.
 *
 * <p>The key is {@code cluster.redisUri} (not {@code cluster.redis.uri}) so that the environment
 * maps onto it like every other key: {@code PUSH_CLUSTER_REDIS_URI}.
 *
 * <p>A Redis Cluster is named by its seed nodes in one string, so the environment variable still
 * holds it: {@code redis-cluster://[user:password@]host:port[,host:port…]} ({@code rediss-cluster://}
 * with TLS). Any reachable seed is enough; the client learns the other masters from it.
 *
 * @param redisUri           {@code redis://[user:password@]host:port[/db]}, {@code rediss://...} (TLS),
 *                           {@code redis-sentinel://host:port[,host:port]/db#masterName} or
 *                           {@code redis-cluster://host:port[,host:port…]}; empty = single node
 * @param redisTimeout       how long one Redis command may take before the publish is refused with 503
 * @param replicasToAck      after each publish batch, {@code WAIT} for this many replicas (0 = do not wait)
 * @param replicasAckTimeout how long that {@code WAIT} may take
 * @param idleTopicTimeout   a topic with no local subscriber and no local read for this long is no
 *                           longer followed (unsubscribed, forgotten) until it is used again; 0 = never
 */
public record Cluster(@JsonSerialize(using = Cluster.Redacting.class) String redisUri, Duration redisTimeout,
                      int replicasToAck, Duration replicasAckTimeout, Duration idleTopicTimeout) {
    public static final String DEFAULT_REDIS_URI = "";
    public static final Duration DEFAULT_REDIS_TIMEOUT = Duration.ofSeconds(2);
    public static final int DEFAULT_REPLICAS_TO_ACK = 0;
    public static final Duration DEFAULT_REPLICAS_ACK_TIMEOUT = Duration.ofMillis(100);
    public static final Duration DEFAULT_IDLE_TOPIC_TIMEOUT = Duration.ofMinutes(5);

    public Cluster {
        Objects.requireNonNull(redisUri, "cluster.redisUri");
        Objects.requireNonNull(redisTimeout, "cluster.redisTimeout");
        Objects.requireNonNull(replicasAckTimeout, "cluster.replicasAckTimeout");
        Objects.requireNonNull(idleTopicTimeout, "cluster.idleTopicTimeout");
        redisUri = redisUri.trim();
        if (!redisUri.isEmpty()) {
            seeds(redisUri);
        }
        if (redisTimeout.toMillis() < 10 || redisTimeout.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new ConfigException("cluster.redisTimeout: " + Durations.format(redisTimeout)
                    + " (expected: 10ms..1m)");
        }
        if (replicasToAck < 0 || replicasToAck > 16) {
            throw new ConfigException("cluster.replicasToAck: " + replicasToAck + " (expected: 0..16)");
        }
        // below redisTimeout: the WAIT is one more command of the batch and must not turn it into a 503
        if (replicasAckTimeout.toMillis() < 1 || replicasAckTimeout.compareTo(redisTimeout) >= 0) {
            throw new ConfigException("cluster.replicasAckTimeout: " + Durations.format(replicasAckTimeout)
                    + " (expected: 1ms.. less than cluster.redisTimeout " + Durations.format(redisTimeout) + ")");
        }
        // checked once a second: below a second it would not be what it says
        if (!idleTopicTimeout.isZero() && (idleTopicTimeout.compareTo(Duration.ofSeconds(1)) < 0
                || idleTopicTimeout.compareTo(Duration.ofDays(7)) > 0)) {
            throw new ConfigException("cluster.idleTopicTimeout: " + Durations.format(idleTopicTimeout)
                    + " (expected: 0s = never, or 1s..7d)");
        }
    }

    /** Without {@code idleTopicTimeout}: the default. */
    public Cluster(String redisUri, Duration redisTimeout, int replicasToAck, Duration replicasAckTimeout) {
        this(redisUri, redisTimeout, replicasToAck, replicasAckTimeout, DEFAULT_IDLE_TOPIC_TIMEOUT);
    }

    /** This configuration with another {@code idleTopicTimeout}. */
    public Cluster withIdleTopicTimeout(Duration timeout) {
        return new Cluster(redisUri, redisTimeout, replicasToAck, replicasAckTimeout, timeout);
    }

    /** The URI and timeout only (no WAIT): what most callers and tests name. */
    public Cluster(String redisUri, Duration redisTimeout) {
        this(redisUri, redisTimeout, DEFAULT_REPLICAS_TO_ACK, DEFAULT_REPLICAS_ACK_TIMEOUT);
    }

    public static Cluster defaults() {
        return new Cluster(DEFAULT_REDIS_URI, DEFAULT_REDIS_TIMEOUT);
    }

    public boolean enabled() {
        return !redisUri.isEmpty();
    }

    /** {@code redis-cluster://} or {@code rediss-cluster://}: a Redis Cluster (sharded pub/sub). */
    public boolean redisCluster() {
        return redisUri.startsWith("redis-cluster://") || redisUri.startsWith("rediss-cluster://");
    }

    /** The URI as Lettuce reads it; only for an enabled cluster that is not a Redis Cluster. */
    public RedisURI uri() {
        return seeds(redisUri).get(0);
    }

    /** Every seed node of a Redis Cluster (one URI each), or the one URI of the other forms. */
    public List<RedisURI> seeds() {
        return seeds(redisUri);
    }

    private static List<RedisURI> seeds(String text) {
        String scheme = text.contains("://") ? text.substring(0, text.indexOf("://")) : "";
        if (!scheme.equals("redis-cluster") && !scheme.equals("rediss-cluster")) {
            return List.of(parse(text));
        }
        String rest = text.substring(scheme.length() + 3);
        int at = rest.lastIndexOf('@');
        String auth = at >= 0 ? rest.substring(0, at + 1) : "";
        String hosts = at >= 0 ? rest.substring(at + 1) : rest;
        String single = scheme.equals("rediss-cluster") ? "rediss://" : "redis://";
        List<RedisURI> seeds = new ArrayList<>();
        for (String host : hosts.split(",")) {
            if (host.isBlank() || host.contains("/") || host.contains("#") || host.contains("?")) {
                throw new ConfigException("cluster.redisUri: " + redacted(text)
                        + " (expected: redis-cluster://[user:password@]host:port[,host:port...], no database)");
            }
            seeds.add(parse(single + auth + host.trim(), text));
        }
        return List.copyOf(seeds);
    }

    private static RedisURI parse(String text) {
        return parse(text, text);
    }

    /** {@code shown}: what the operator wrote, for the message (a seed is cut from it). */
    private static RedisURI parse(String text, String shown) {
        String scheme = text.contains("://") ? text.substring(0, text.indexOf("://")) : "";
        if (!scheme.equals("redis") && !scheme.equals("rediss") && !scheme.equals("redis-sentinel")) {
            throw new ConfigException("cluster.redisUri: " + redacted(text)
                    + " (expected: redis://host:port, rediss://host:port, redis-sentinel://host:port/db#master"
                    + " or redis-cluster://host:port,host:port)");
        }
        RedisURI uri;
        try {
            uri = RedisURI.create(text);
        } catch (RuntimeException e) {
            throw new ConfigException("cluster.redisUri: " + redacted(shown) + " (" + withoutSecret(e.getMessage(), text) + ")");
        }
        boolean sentinel = scheme.equals("redis-sentinel");
        if (!sentinel && (uri.getHost() == null || uri.getHost().isBlank() || uri.getPort() < 1 || uri.getPort() > 65535)) {
            throw new ConfigException("cluster.redisUri: " + redacted(shown) + " (expected a host and a port 1..65535)");
        }
        if (sentinel && (uri.getSentinels().isEmpty() || uri.getSentinelMasterId() == null)) {
            throw new ConfigException("cluster.redisUri: " + redacted(shown)
                    + " (expected: redis-sentinel://host:port[,host:port]/db#masterName)");
        }
        return uri;
    }

    /** The URI without its password, for messages: no secret in logs. */
    public static String redacted(String text) {
        int at = text.lastIndexOf('@');
        int start = text.indexOf("://");
        return at > start && start >= 0 ? text.substring(0, start + 3) + "***" + text.substring(at) : text;
    }

    /**
     * A parser's message about {@code text}, which often quotes it whole (a URISyntaxException
     * does): with the URI's user information (its password) cut out, or, should some of it remain
     * in another form, only that the URI is not valid.
     */
    static String withoutSecret(String message, String text) {
        if (message == null) {
            return "not a valid URI";
        }
        int start = text.indexOf("://");
        int at = text.lastIndexOf('@');
        if (start < 0 || at <= start + 3) {
            return message; // no user information: nothing secret in it
        }
        String userInfo = text.substring(start + 3, at);
        String cleaned = message.replace(text, redacted(text));
        int colon = userInfo.indexOf(':');
        String password = colon >= 0 ? userInfo.substring(colon + 1) : userInfo;
        return cleaned.contains(userInfo) || (!password.isEmpty() && cleaned.contains(password))
                ? "not a valid URI" : cleaned;
    }

    /** The printed configuration ({@code --print-config}, the start-up log) never shows the password. */
    static final class Redacting extends JsonSerializer<String> {
        @Override
        public void serialize(String value, JsonGenerator g, SerializerProvider p) throws IOException {
            g.writeString(redacted(value));
        }
    }
}
