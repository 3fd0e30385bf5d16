package io.pushd.server.config;

import java.time.Duration;

/**
 * A changed copy of a {@link Limits}, from {@link Limits#toBuilder()}: the
 * record has too many components to spell out at every call site, and adding one must not touch them.
 */
public final class LimitsBuilder {

    private int maxPublishBytes;
    private int maxFrameBytes;
    private int maxTopicsPerConnection;
    private int maxConnections;
    private int maxConnectionsPerIp;
    private int maxHandshakesPerSecond;
    private Duration handshakeTimeout;
    private Duration slowConsumerTimeout;
    private int maxInboundMessagesPerSecond;
    private boolean permessageDeflate;
    private int maxTcpConnections;
    private int maxTcpConnectionsPerAddress;
    private Duration httpIdleTimeout;
    private Duration httpMaxConnectionAge;
    private int maxTopics;
    private int maxConnectionsPerSubject;

    LimitsBuilder(Limits from) {
        maxPublishBytes = from.maxPublishBytes();
        maxFrameBytes = from.maxFrameBytes();
        maxTopicsPerConnection = from.maxTopicsPerConnection();
        maxConnections = from.maxConnections();
        maxConnectionsPerIp = from.maxConnectionsPerIp();
        maxHandshakesPerSecond = from.maxHandshakesPerSecond();
        handshakeTimeout = from.handshakeTimeout();
        slowConsumerTimeout = from.slowConsumerTimeout();
        maxInboundMessagesPerSecond = from.maxInboundMessagesPerSecond();
        permessageDeflate = from.permessageDeflate();
        maxTcpConnections = from.maxTcpConnections();
        maxTcpConnectionsPerAddress = from.maxTcpConnectionsPerAddress();
        httpIdleTimeout = from.httpIdleTimeout();
        httpMaxConnectionAge = from.httpMaxConnectionAge();
        maxTopics = from.maxTopics();
        maxConnectionsPerSubject = from.maxConnectionsPerSubject();
    }

    public LimitsBuilder maxPublishBytes(int value) {
        maxPublishBytes = value;
        return this;
    }

    public LimitsBuilder maxFrameBytes(int value) {
        maxFrameBytes = value;
        return this;
    }

    public LimitsBuilder maxTopicsPerConnection(int value) {
        maxTopicsPerConnection = value;
        return this;
    }

    public LimitsBuilder maxConnections(int value) {
        maxConnections = value;
        return this;
    }

    public LimitsBuilder maxConnectionsPerIp(int value) {
        maxConnectionsPerIp = value;
        return this;
    }

    public LimitsBuilder maxHandshakesPerSecond(int value) {
        maxHandshakesPerSecond = value;
        return this;
    }

    public LimitsBuilder handshakeTimeout(Duration value) {
        handshakeTimeout = value;
        return this;
    }

    public LimitsBuilder slowConsumerTimeout(Duration value) {
        slowConsumerTimeout = value;
        return this;
    }

    public LimitsBuilder maxInboundMessagesPerSecond(int value) {
        maxInboundMessagesPerSecond = value;
        return this;
    }

    public LimitsBuilder permessageDeflate(boolean value) {
        permessageDeflate = value;
        return this;
    }

    public LimitsBuilder maxTcpConnections(int value) {
        maxTcpConnections = value;
        return this;
    }

    public LimitsBuilder maxTcpConnectionsPerAddress(int value) {
        maxTcpConnectionsPerAddress = value;
        return this;
    }

    public LimitsBuilder httpIdleTimeout(Duration value) {
        httpIdleTimeout = value;
        return this;
    }

    public LimitsBuilder httpMaxConnectionAge(Duration value) {
        httpMaxConnectionAge = value;
        return this;
    }

    public LimitsBuilder maxTopics(int value) {
        maxTopics = value;
        return this;
    }

    public LimitsBuilder maxConnectionsPerSubject(int value) {
        maxConnectionsPerSubject = value;
        return this;
    }

    /** @throws ConfigException like the record's constructor, naming the first key out of range */
    public Limits build() {
        return new Limits(maxPublishBytes, maxFrameBytes, maxTopicsPerConnection, maxConnections, maxConnectionsPerIp, maxHandshakesPerSecond, handshakeTimeout, slowConsumerTimeout, maxInboundMessagesPerSecond, permessageDeflate, maxTcpConnections, maxTcpConnectionsPerAddress, httpIdleTimeout, httpMaxConnectionAge, maxTopics,
                maxConnectionsPerSubject);
    }
}
