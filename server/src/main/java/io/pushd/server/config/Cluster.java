package io.pushd.server.config;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import io.lettuce.core.RedisURI;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;

/**
 * Cluster mode: several nodes behind one plain balancer share one history in Redis. Off by default
 * ({@code redisUri} empty): the daemon is a single node with nothing external.
 *
 * <p>The key is {@code cluster.redisUri} (not {@code cluster.redis.uri}) so that the environment
 * maps onto it like every other key: {@code PUSH_CLUSTER_REDIS_URI}.
 *
 * @param redisUri     {@code redis://[user:password@]host:port[/db]}, {@code rediss://...} (TLS) or
 *                     {@code redis-sentinel://host:port[,host:port]/db#masterName}; empty = single node
 * @param redisTimeout how long one Redis command may take before the publish is refused with 503
 */
public record Cluster(@JsonSerialize(using = Cluster.Redacting.class) String redisUri, Duration redisTimeout) {
    public static final String DEFAULT_REDIS_URI = "";
    public static final Duration DEFAULT_REDIS_TIMEOUT = Duration.ofSeconds(2);

    public Cluster {
        Objects.requireNonNull(redisUri, "cluster.redisUri");
        Objects.requireNonNull(redisTimeout, "cluster.redisTimeout");
        redisUri = redisUri.trim();
        if (!redisUri.isEmpty()) {
            parse(redisUri);
        }
        if (redisTimeout.toMillis() < 10 || redisTimeout.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new ConfigException("cluster.redisTimeout: " + Durations.format(redisTimeout)
                    + " (expected: 10ms..1m)");
        }
    }

    public static Cluster defaults() {
        return new Cluster(DEFAULT_REDIS_URI, DEFAULT_REDIS_TIMEOUT);
    }

    public boolean enabled() {
        return !redisUri.isEmpty();
    }

    /** The URI as Lettuce reads it; only for an enabled cluster. */
    public RedisURI uri() {
        return parse(redisUri);
    }

    private static RedisURI parse(String text) {
        String scheme = text.contains("://") ? text.substring(0, text.indexOf("://")) : "";
        if (!scheme.equals("redis") && !scheme.equals("rediss") && !scheme.equals("redis-sentinel")) {
            throw new ConfigException("cluster.redisUri: " + redacted(text)
                    + " (expected: redis://host:port, rediss://host:port or redis-sentinel://host:port/db#master)");
        }
        RedisURI uri;
        try {
            uri = RedisURI.create(text);
        } catch (RuntimeException e) {
            throw new ConfigException("cluster.redisUri: " + redacted(text) + " (" + e.getMessage() + ")");
        }
        boolean sentinel = scheme.equals("redis-sentinel");
        if (!sentinel && (uri.getHost() == null || uri.getHost().isBlank() || uri.getPort() < 1 || uri.getPort() > 65535)) {
            throw new ConfigException("cluster.redisUri: " + redacted(text) + " (expected a host and a port 1..65535)");
        }
        if (sentinel && (uri.getSentinels().isEmpty() || uri.getSentinelMasterId() == null)) {
            throw new ConfigException("cluster.redisUri: " + redacted(text)
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

    /** The printed configuration ({@code --print-config}, the start-up log) never shows the password. */
    static final class Redacting extends JsonSerializer<String> {
        @Override
        public void serialize(String value, JsonGenerator g, SerializerProvider p) throws IOException {
            g.writeString(redacted(value));
        }
    }
}
