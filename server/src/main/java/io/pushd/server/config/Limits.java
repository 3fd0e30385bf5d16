package io.pushd.server.config;

import io.pushd.server.auth.AuthConfig;
import java.time.Duration;

/** Bounds on what one client may send or hold: the {@code limits} section of {@link ServerConfig}. */
public record Limits(int maxPublishBytes, int maxFrameBytes, int maxTopicsPerConnection, int maxConnections,
                     int maxConnectionsPerIp, int maxHandshakesPerSecond, Duration handshakeTimeout,
                     Duration slowConsumerTimeout, int maxInboundMessagesPerSecond, boolean permessageDeflate,
                     int maxTcpConnections, int maxTcpConnectionsPerAddress, Duration httpIdleTimeout,
                     Duration httpMaxConnectionAge, int maxTopics, int maxConnectionsPerSubject) {
    public static final int DEFAULT_MAX_PUBLISH_BYTES = 64 * 1024;
    public static final int DEFAULT_MAX_FRAME_BYTES = 64 * 1024;
    public static final int DEFAULT_MAX_TOPICS_PER_CONNECTION = 100;
    public static final int DEFAULT_MAX_CONNECTIONS = 100_000;
    public static final int DEFAULT_MAX_CONNECTIONS_PER_IP = 100_000;
    public static final int DEFAULT_MAX_HANDSHAKES_PER_SECOND = 5_000;
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_SLOW_CONSUMER_TIMEOUT = Duration.ofSeconds(30);
    public static final int DEFAULT_MAX_INBOUND_MESSAGES_PER_SECOND = 100;
    /** 0: the process's open-file limit minus a reserve (see PushServer). */
    public static final int DEFAULT_MAX_TCP_CONNECTIONS = 0;
    /** 0: 90 % of the TCP cap, so one address can never take the last tenth. */
    public static final int DEFAULT_MAX_TCP_CONNECTIONS_PER_ADDRESS = 0;
    /** Above nginx's upstream keepalive_timeout (5 s in the example), like handshakeTimeout was. */
    public static final Duration DEFAULT_HTTP_IDLE_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_HTTP_MAX_CONNECTION_AGE = Duration.ofMinutes(10);
    /**
     * Topics are made by any publisher and each keeps its head for the whole epoch (~200-250 B
     * of heap plus its name, measured): a million is ~250 MB, a quarter of the shipped 1 GiB
     * heap, and room for per-user topics of {@link #DEFAULT_MAX_CONNECTIONS} subscribers.
     */
    public static final int DEFAULT_MAX_TOPICS = 1_000_000;

    public Limits {
        ServerConfig.require(maxPublishBytes >= 16 && maxPublishBytes <= 16 << 20, "limits.maxPublishBytes", maxPublishBytes,
                "16 bytes - 16 MiB");
        ServerConfig.require(maxFrameBytes >= 256 && maxFrameBytes <= 16 << 20, "limits.maxFrameBytes", maxFrameBytes,
                "256 bytes - 16 MiB");
        ServerConfig.require(maxTopicsPerConnection >= 1 && maxTopicsPerConnection <= 10_000, "limits.maxTopicsPerConnection",
                maxTopicsPerConnection, "1-10000");
        ServerConfig.require(maxConnections >= 1, "limits.maxConnections", maxConnections, ">= 1");
        ServerConfig.require(maxConnectionsPerIp >= 1, "limits.maxConnectionsPerIp", maxConnectionsPerIp, ">= 1");
        ServerConfig.require(maxHandshakesPerSecond >= 1, "limits.maxHandshakesPerSecond", maxHandshakesPerSecond, ">= 1");
        ServerConfig.require(handshakeTimeout != null && handshakeTimeout.toMillis() >= 100, "limits.handshakeTimeout",
                handshakeTimeout, ">= 100ms");
        ServerConfig.require(slowConsumerTimeout != null && slowConsumerTimeout.toMillis() >= 100,
                "limits.slowConsumerTimeout", slowConsumerTimeout, ">= 100ms");
        ServerConfig.require(maxInboundMessagesPerSecond >= 1, "limits.maxInboundMessagesPerSecond",
                maxInboundMessagesPerSecond, ">= 1");
        ServerConfig.require(maxTcpConnections >= 0, "limits.maxTcpConnections", maxTcpConnections,
                ">= 0 (0 = the open-file limit minus a reserve)");
        ServerConfig.require(maxTcpConnectionsPerAddress >= 0, "limits.maxTcpConnectionsPerAddress",
                maxTcpConnectionsPerAddress, ">= 0 (0 = 90 % of limits.maxTcpConnections)");
        ServerConfig.require(maxTcpConnections == 0 || maxTcpConnectionsPerAddress <= maxTcpConnections,
                "limits.maxTcpConnectionsPerAddress", maxTcpConnectionsPerAddress,
                "<= limits.maxTcpConnections (" + maxTcpConnections + ")");
        ServerConfig.require(httpIdleTimeout != null && httpIdleTimeout.toMillis() >= 100, "limits.httpIdleTimeout",
                httpIdleTimeout, ">= 100ms");
        ServerConfig.require(httpMaxConnectionAge != null && httpMaxConnectionAge.toMillis() >= 100,
                "limits.httpMaxConnectionAge", httpMaxConnectionAge, ">= 100ms");
        ServerConfig.require(maxTopics >= 1, "limits.maxTopics", maxTopics, ">= 1");
        ServerConfig.require(maxConnectionsPerSubject >= 1, "limits.maxConnectionsPerSubject", maxConnectionsPerSubject, ">= 1");
    }

    public static Limits defaults() {
        return new Limits(DEFAULT_MAX_PUBLISH_BYTES, DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_TOPICS_PER_CONNECTION,
                DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_IP, DEFAULT_MAX_HANDSHAKES_PER_SECOND,
                DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_SLOW_CONSUMER_TIMEOUT, DEFAULT_MAX_INBOUND_MESSAGES_PER_SECOND,
                false, DEFAULT_MAX_TCP_CONNECTIONS, DEFAULT_MAX_TCP_CONNECTIONS_PER_ADDRESS,
                DEFAULT_HTTP_IDLE_TIMEOUT, DEFAULT_HTTP_MAX_CONNECTION_AGE, DEFAULT_MAX_TOPICS,
                AuthConfig.DEFAULT_MAX_CONNECTIONS_PER_SUBJECT);
    }

    public LimitsBuilder toBuilder() {
        return new LimitsBuilder(this);
    }

    public Limits withMaxConnections(int n) {
        return toBuilder().maxConnections(n).build();
    }

    /** The caps on TCP connections of every kind (0 = derived, see the constants). */
    public Limits withTcpConnections(int total, int perAddress) {
        return toBuilder().maxTcpConnections(total).maxTcpConnectionsPerAddress(perAddress).build();
    }

    /** How long a kept-alive HTTP connection may wait for its next request, and live in all. */
    public Limits withHttpKeepAlive(Duration idleTimeout, Duration maxConnectionAge) {
        return toBuilder().httpIdleTimeout(idleTimeout).httpMaxConnectionAge(maxConnectionAge).build();
    }

    /** Compression costs a deflate per subscriber (frames are no longer shared), so it is opt-in. */
    public Limits withPermessageDeflate(boolean on) {
        return toBuilder().permessageDeflate(on).build();
    }

    public Limits withMaxTopics(int n) {
        return toBuilder().maxTopics(n).build();
    }
}
