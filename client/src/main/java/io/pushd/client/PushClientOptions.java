package io.pushd.client;

import io.pushd.protocol.EventId;
import io.pushd.protocol.TopicName;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;

/**
 * Immutable, validated settings of one {@link PushClient}. Build with {@link #builder(String, int)};
 * {@link #toBuilder()} derives variants (a load test builds one template and changes the topic or
 * the local address per client).
 */
public final class PushClientOptions {

    public static final String PATH = "/v1/live";
    public static final String SSE_PATH = "/v1/sse";
    public static final Duration DEFAULT_BASE_DELAY = Duration.ofSeconds(5);
    public static final Duration DEFAULT_MAX_DELAY = Duration.ofSeconds(60);
    public static final Duration DEFAULT_MAX_HINT = Duration.ofMinutes(5);
    public static final Duration DEFAULT_SILENCE_TIMEOUT = Duration.ofSeconds(60);
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    public static final int DEFAULT_MAX_FRAME_BYTES = 1024 * 1024;

    private final String host;
    private final int port;
    private final Map<String, EventId> topics;
    private final InetAddress localAddress;
    private final Duration baseDelay;
    private final Duration maxDelay;
    private final Duration maxHint;
    private final Random random;
    private final Backoff backoff;
    private final Duration silenceTimeout;
    private final Duration connectTimeout;
    private final Duration handshakeTimeout;
    private final int maxFrameBytes;
    private final Supplier<String> accessToken;
    private final Transport transport;

    private PushClientOptions(Builder b) {
        this.host = b.host;
        this.port = b.port;
        this.topics = Collections.unmodifiableMap(new LinkedHashMap<>(b.topics));
        this.localAddress = b.localAddress;
        this.baseDelay = b.baseDelay;
        this.maxDelay = b.maxDelay;
        this.maxHint = b.maxHint;
        this.random = b.random;
        this.silenceTimeout = b.silenceTimeout;
        this.connectTimeout = b.connectTimeout;
        this.handshakeTimeout = b.handshakeTimeout;
        this.maxFrameBytes = b.maxFrameBytes;
        this.accessToken = b.accessToken;
        this.transport = b.transport;
        this.backoff = b.backoff != null ? b.backoff : Backoff.exponential(baseDelay, maxDelay, maxHint, random);
    }

    public static Builder builder(String host, int port) {
        return new Builder(host, port);
    }

    public Builder toBuilder() {
        Builder b = new Builder(host, port);
        b.topics.putAll(topics);
        b.localAddress = localAddress;
        b.baseDelay = baseDelay;
        b.maxDelay = maxDelay;
        b.maxHint = maxHint;
        b.random = random;
        b.backoff = backoff instanceof ExponentialBackoff ? null : backoff; // rebuilt from the fields
        b.silenceTimeout = silenceTimeout;
        b.connectTimeout = connectTimeout;
        b.handshakeTimeout = handshakeTimeout;
        b.maxFrameBytes = maxFrameBytes;
        b.accessToken = accessToken;
        b.transport = transport;
        return b;
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    /** Followed topics in order, each with its starting ID ({@code null}: live only). */
    public Map<String, EventId> topics() {
        return topics;
    }

    /** Source address to bind, or {@code null} for the system's choice. */
    public InetAddress localAddress() {
        return localAddress;
    }

    public Duration baseDelay() {
        return baseDelay;
    }

    public Duration maxDelay() {
        return maxDelay;
    }

    public Duration maxHint() {
        return maxHint;
    }

    public Backoff backoff() {
        return backoff;
    }

    public Duration silenceTimeout() {
        return silenceTimeout;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    public Duration handshakeTimeout() {
        return handshakeTimeout;
    }

    public int maxFrameBytes() {
        return maxFrameBytes;
    }

    /** Asked before every connection attempt for the token sent as {@code Authorization: Bearer}; null: none. */
    public Supplier<String> accessToken() {
        return accessToken;
    }

    /** WebSocket (the default) or server-sent events. */
    public Transport transport() {
        return transport;
    }

    @Override
    public String toString() {
        // never the token: only whether there is a supplier
        return "PushClientOptions[" + transport.label() + " " + host + ":" + port + ", topics=" + topics.keySet()
                + ", local=" + localAddress + ", backoff=" + backoff + ", silenceTimeout=" + silenceTimeout
                + (accessToken == null ? "" : ", accessToken=supplied") + "]";
    }

    static Duration requirePositive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
        }
        return d;
    }

    /** Mutable, not thread-safe; {@link #build()} validates and copies. */
    public static final class Builder {
        private final String host;
        private final int port;
        private final Map<String, EventId> topics = new LinkedHashMap<>();
        private InetAddress localAddress;
        private Duration baseDelay = DEFAULT_BASE_DELAY;
        private Duration maxDelay = DEFAULT_MAX_DELAY;
        private Duration maxHint = DEFAULT_MAX_HINT;
        private Random random;
        private Backoff backoff;
        private Duration silenceTimeout = DEFAULT_SILENCE_TIMEOUT;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration handshakeTimeout = DEFAULT_HANDSHAKE_TIMEOUT;
        private int maxFrameBytes = DEFAULT_MAX_FRAME_BYTES;
        private Supplier<String> accessToken;
        private Transport transport = Transport.WEBSOCKET;

        private Builder(String host, int port) {
            if (host == null || host.isBlank()) {
                throw new IllegalArgumentException("host: " + host + " (expected: a host name or address)");
            }
            if (port < 1 || port > 65_535) {
                throw new IllegalArgumentException("port: " + port + " (expected: 1-65535)");
            }
            this.host = host;
            this.port = port;
        }

        /** Follows {@code topic} live (or from its stored ID once one was seen). */
        public Builder topic(String topic) {
            return topic(topic, null);
        }

        /** Follows {@code topic}, first replaying the kept events after {@code after} ({@code null}: live only). */
        public Builder topic(String topic, EventId after) {
            TopicName.require(topic);
            topics.put(topic, after);
            return this;
        }

        /** Binds this source address, so one load-test host can use more than ~28k ports per server. */
        public Builder localAddress(InetAddress address) {
            this.localAddress = address;
            return this;
        }

        /** The first delay without a hint is uniform in [0, baseDelay]; it doubles per failed attempt. */
        public Builder baseDelay(Duration d) {
            this.baseDelay = requirePositive("baseDelay", d);
            return this;
        }

        /** Upper bound of a delay without a hint. */
        public Builder maxDelay(Duration d) {
            this.maxDelay = requirePositive("maxDelay", d);
            return this;
        }

        /** Upper bound of a server hint that is honoured. */
        public Builder maxHint(Duration d) {
            this.maxHint = requirePositive("maxHint", d);
            return this;
        }

        /** The jitter source (a seeded one in tests); default {@code ThreadLocalRandom}. */
        public Builder random(Random random) {
            this.random = random;
            return this;
        }

        /** Replaces the delay strategy built from baseDelay/maxDelay/maxHint/random. */
        public Builder backoff(Backoff backoff) {
            this.backoff = backoff;
            return this;
        }

        /** No frame at all (pings included) for this long: the server is taken for dead. */
        public Builder silenceTimeout(Duration d) {
            this.silenceTimeout = requirePositive("silenceTimeout", d);
            return this;
        }

        public Builder connectTimeout(Duration d) {
            this.connectTimeout = requirePositive("connectTimeout", d);
            return this;
        }

        public Builder handshakeTimeout(Duration d) {
            this.handshakeTimeout = requirePositive("handshakeTimeout", d);
            return this;
        }

        /**
         * {@link Transport#WEBSOCKET} (default) or {@link Transport#SSE}: the same topics, resume,
         * backoff and hints over a {@code text/event-stream} (the {@code event: close} hint and
         * {@code retry:} are honoured as the WebSocket's 1012/1013 {@code retryMs}).
         */
        public Builder transport(Transport transport) {
            if (transport == null) {
                throw new IllegalArgumentException("transport: null (expected: WEBSOCKET or SSE)");
            }
            this.transport = transport;
            return this;
        }

        /** Largest server message accepted (a WebSocket message, or an SSE message with all its lines). */
        public Builder maxFrameBytes(int n) {
            if (n < 1024) {
                throw new IllegalArgumentException("maxFrameBytes: " + n + " (expected: >= 1024)");
            }
            this.maxFrameBytes = n;
            return this;
        }

        /**
         * A server with {@code auth.mode: jwt}: {@code supplier} is asked on the client's event loop
         * before every connection attempt (so keep it fast: return a cached token, refreshed
         * elsewhere), and its token goes out as {@code Authorization: Bearer} on the upgrade. A
         * null or empty answer sends none. See also {@link PushClient#refresh(String)}.
         */
        public Builder accessToken(Supplier<String> supplier) {
            this.accessToken = supplier;
            return this;
        }

        public PushClientOptions build() {
            if (topics.isEmpty()) {
                throw new IllegalArgumentException("topics: none (expected: at least one)");
            }
            if (maxDelay.compareTo(baseDelay) < 0) {
                throw new IllegalArgumentException("maxDelay: " + maxDelay + " (expected: >= baseDelay " + baseDelay + ")");
            }
            if (connectTimeout.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("connectTimeout: " + connectTimeout + " (expected: < 24 days)");
            }
            return new PushClientOptions(this);
        }
    }
}
