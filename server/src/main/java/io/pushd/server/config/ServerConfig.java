package io.pushd.server.config;

import io.pushd.protocol.TopicName;
import io.pushd.server.auth.AuthConfig;
import io.pushd.server.tls.TlsConfig;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The whole, validated server configuration. Every section is an immutable record whose compact
 * constructor rejects out-of-range values with the key, the value and what was expected. The
 * defaults are the {@code DEFAULT_*} constants and equal {@code config/server.yaml}.
 */
public record ServerConfig(Server server, Store store, Limits limits, Drain drain, Reconnect reconnect,
                           Heartbeat heartbeat, Security security, AuthSettings auth, TlsConfig tls,
                           Cluster cluster, Fanout fanout) {

    public ServerConfig {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(drain, "drain");
        Objects.requireNonNull(reconnect, "reconnect");
        Objects.requireNonNull(heartbeat, "heartbeat");
        Objects.requireNonNull(security, "security");
        Objects.requireNonNull(auth, "auth");
        Objects.requireNonNull(tls, "tls");
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(fanout, "fanout");
        // the checks across sections (mode jwt needs keys); the fields are not assigned yet here
        new AuthConfig(auth.mode(), auth.jwt(), security.publishAllowedFrom(), limits.maxConnectionsPerSubject());
    }

    /** The auth code's one value, gathered from {@code auth.*}, {@code security.*} and {@code limits.*}. */
    public AuthConfig authConfig() {
        return new AuthConfig(auth.mode(), auth.jwt(), security.publishAllowedFrom(),
                limits.maxConnectionsPerSubject());
    }

    public static ServerConfig defaults() {
        return new ServerConfig(Server.defaults(), Store.defaults(), Limits.defaults(), Drain.defaults(),
                Reconnect.defaults(), Heartbeat.defaults(), Security.defaults(), AuthSettings.defaults(),
                TlsConfig.defaults(), Cluster.defaults(), Fanout.defaults());
    }

    public ServerConfig withServer(Server s) {
        return new ServerConfig(s, store, limits, drain, reconnect, heartbeat, security, auth, tls, cluster, fanout);
    }

    public ServerConfig withStore(Store s) {
        return new ServerConfig(server, s, limits, drain, reconnect, heartbeat, security, auth, tls, cluster, fanout);
    }

    public ServerConfig withLimits(Limits l) {
        return new ServerConfig(server, store, l, drain, reconnect, heartbeat, security, auth, tls, cluster, fanout);
    }

    public ServerConfig withDrain(Drain d) {
        return new ServerConfig(server, store, limits, d, reconnect, heartbeat, security, auth, tls, cluster, fanout);
    }

    public ServerConfig withReconnect(Reconnect r) {
        return new ServerConfig(server, store, limits, drain, r, heartbeat, security, auth, tls, cluster, fanout);
    }

    public ServerConfig withHeartbeat(Heartbeat h) {
        return new ServerConfig(server, store, limits, drain, reconnect, h, security, auth, tls, cluster, fanout);
    }

    public ServerConfig withSecurity(Security s) {
        return new ServerConfig(server, store, limits, drain, reconnect, heartbeat, s, auth, tls, cluster, fanout);
    }

    public ServerConfig withCluster(Cluster c) {
        return new ServerConfig(server, store, limits, drain, reconnect, heartbeat, security, auth, tls, c, fanout);
    }

    public ServerConfig withAuth(AuthSettings a) {
        return new ServerConfig(server, store, limits, drain, reconnect, heartbeat, security, a, tls, cluster, fanout);
    }

    public ServerConfig withFanout(Fanout f) {
        return new ServerConfig(server, store, limits, drain, reconnect, heartbeat, security, auth, tls, cluster, f);
    }

    public ServerConfig withTls(TlsConfig t) {
        return new ServerConfig(server, store, limits, drain, reconnect, heartbeat, security, auth, t, cluster, fanout);
    }

    /**
     * Listening sockets and event loops; what the daemon serves besides the API: the demo page, and
     * the topic a {@code /v1/live} query without {@code topic} follows ({@code ""} = none, such a
     * query is refused); {@code adminPort} (optional) serves the status routes alone; {@code transport}
     * the I/O transport (auto, epoll, io_uring, nio); {@code compilerThreadNice} the scheduling
     * priority (nice, 0 = left alone) the daemon gives the JIT's compiler threads once it is ready.
     */
    public record Server(String host, int port, int ioThreads, boolean demo, String defaultTopic, Integer adminPort,
                         String transport, int compilerThreadNice) {
        public static final String DEFAULT_HOST = "0.0.0.0";
        public static final int DEFAULT_PORT = 8080;
        /** 0 means two per core. */
        public static final int DEFAULT_IO_THREADS = 0;
        /** The page only uses the public API, so serving it exposes nothing new; off with server.demo. */
        public static final boolean DEFAULT_DEMO = true;
        /** Off: a topic is named by the client unless an operator picks one for playbook clients. */
        public static final String DEFAULT_DEFAULT_TOPIC = "";
        /** auto: epoll where available (measured faster than io_uring for fan-out here), else NIO. */
        public static final String DEFAULT_TRANSPORT = "auto";
        /**
         * The lowest priority: a compilation then waits for the event loops rather than delaying a
         * publish's answer or a delivery (measured in the README's Performance section).
         */
        public static final int DEFAULT_COMPILER_THREAD_NICE = 19;

        public Server {
            require(host != null && !host.isBlank(), "server.host", host, "a host name or address");
            require(port >= 0 && port <= 65535, "server.port", port, "0-65535 (0 picks a free port)");
            require(ioThreads >= 0 && ioThreads <= 1024, "server.ioThreads", ioThreads, "0-1024 (0 = 2 per core)");
            require(defaultTopic != null && (defaultTopic.isEmpty() || TopicName.isValid(defaultTopic)),
                    "server.defaultTopic", defaultTopic, "'' (off) or 1-200 characters of [A-Za-z0-9_.:-]");
            require(adminPort == null || adminPort >= 0 && adminPort <= 65535 && (adminPort == 0 || adminPort != port),
                    "server.adminPort", adminPort, "0-65535 and not server.port (0 picks a free port)");
            transport = transport == null ? DEFAULT_TRANSPORT : transport;
            require(List.of("auto", "epoll", "io_uring", "nio").contains(transport), "server.transport", transport,
                    "auto, epoll, io_uring or nio");
            require(compilerThreadNice >= 0 && compilerThreadNice <= 19, "server.compilerThreadNice", compilerThreadNice,
                    "0-19 (0 = left alone)");
        }

        /** The listening socket only; the rest at its defaults. */
        public Server(String host, int port, int ioThreads) {
            this(host, port, ioThreads, DEFAULT_DEMO, DEFAULT_DEFAULT_TOPIC, null, DEFAULT_TRANSPORT,
                    DEFAULT_COMPILER_THREAD_NICE);
        }

        public static Server defaults() {
            return new Server(DEFAULT_HOST, DEFAULT_PORT, DEFAULT_IO_THREADS);
        }

        public Server withPort(int p) {
            return new Server(host, p, ioThreads, demo, defaultTopic, adminPort, transport, compilerThreadNice);
        }

        public Server withDemo(boolean on) {
            return new Server(host, port, ioThreads, on, defaultTopic, adminPort, transport, compilerThreadNice);
        }

        public Server withDefaultTopic(String topic) {
            return new Server(host, port, ioThreads, demo, topic, adminPort, transport, compilerThreadNice);
        }

        public Server withAdminPort(Integer p) {
            return new Server(host, port, ioThreads, demo, defaultTopic, p, transport, compilerThreadNice);
        }

        public Server withTransport(String t) {
            return new Server(host, port, ioThreads, demo, defaultTopic, adminPort, t, compilerThreadNice);
        }

        /** The default topic, or null when off. */
        public String defaultTopicOrNull() {
            return defaultTopic.isEmpty() ? null : defaultTopic;
        }
    }

    /** The event history on disk. */
    public record Store(String dataDir, Duration retentionAge, long retentionCount, Duration dedupeWindow,
                        boolean fsync, Duration retentionCheckInterval, long minFreeBytes, boolean replayWarmup,
                        boolean appendOnEventLoop) {
        public static final String DEFAULT_DATA_DIR = "./data";
        public static final Duration DEFAULT_RETENTION_AGE = Duration.ofHours(24);
        public static final long DEFAULT_RETENTION_COUNT = 100_000;
        public static final Duration DEFAULT_DEDUPE_WINDOW = Duration.ofHours(24);
        public static final Duration DEFAULT_RETENTION_CHECK_INTERVAL = Duration.ofMinutes(1);
        /** Publishes are refused (507) rather than leave less than this free on the data directory's disk. */
        public static final long DEFAULT_MIN_FREE_BYTES = 64L << 20;
        /**
         * On: the start replays a scratch log through the real replay path before the server is
         * ready, so the clients replaying after a restart do not pay for the JIT (README, Performance).
         */
        public static final boolean DEFAULT_REPLAY_WARMUP = true;
        /**
         * On: a publish that finds the writer idle is appended by the event loop it came in on, not
         * handed to the writer thread and back (two wake-ups); off where a slow disk must never hold
         * an event loop up. Only without fsync (see {@code history.Publisher}).
         */
        public static final boolean DEFAULT_APPEND_ON_EVENT_LOOP = true;

        public Store {
            require(dataDir != null && !dataDir.isBlank(), "store.dataDir", dataDir, "a directory path");
            require(retentionAge != null && retentionAge.toMinutes() >= 1, "store.retentionAge", retentionAge,
                    ">= 1m");
            require(retentionCount >= 1, "store.retentionCount", retentionCount, ">= 1");
            require(dedupeWindow != null && !dedupeWindow.isNegative(), "store.dedupeWindow", dedupeWindow,
                    ">= 0");
            require(retentionCheckInterval != null && retentionCheckInterval.toMillis() >= 10,
                    "store.retentionCheckInterval", retentionCheckInterval, ">= 10ms");
            require(minFreeBytes >= 0, "store.minFreeBytes", minFreeBytes, ">= 0 bytes");
        }

        public static Store defaults() {
            return new Store(DEFAULT_DATA_DIR, DEFAULT_RETENTION_AGE, DEFAULT_RETENTION_COUNT,
                    DEFAULT_DEDUPE_WINDOW, false, DEFAULT_RETENTION_CHECK_INTERVAL, DEFAULT_MIN_FREE_BYTES,
                    DEFAULT_REPLAY_WARMUP, DEFAULT_APPEND_ON_EVENT_LOOP);
        }

        public StoreBuilder toBuilder() {
            return new StoreBuilder(this);
        }

        public Store withDataDir(String d) {
            return toBuilder().dataDir(d).build();
        }

        public Store withRetention(Duration age, long count) {
            return toBuilder().retentionAge(age).retentionCount(count).build();
        }

        public Store withReplayWarmup(boolean on) {
            return toBuilder().replayWarmup(on).build();
        }

        public Store withFsync(boolean f) {
            return toBuilder().fsync(f).build();
        }

        public Store withMinFreeBytes(long bytes) {
            return toBuilder().minFreeBytes(bytes).build();
        }
    }

    /**
     * The orderly stop: readiness off, grace for the balancer, paced 1012 closes, bounded wait.
     * With {@code expectRestart} a single node plans the clients' returns after its own start-up
     * time (see {@code PushServer#returnsAfterMillis}): its next process cannot serve before the
     * old one has exited and started again, and clients hinted back earlier would fail and back
     * off for longer. A cluster node never does (the other nodes take its clients at once).
     */
    public record Drain(Duration lbGrace, Duration minWindow, Duration deadline, boolean expectRestart) {
        public static final Duration DEFAULT_LB_GRACE = Duration.ofSeconds(2);
        public static final Duration DEFAULT_MIN_WINDOW = Duration.ofSeconds(5);
        public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(25);

        public Drain {
            require(lbGrace != null && !lbGrace.isNegative(), "drain.lbGrace", lbGrace, ">= 0");
            require(minWindow != null && !minWindow.isNegative(), "drain.minWindow", minWindow, ">= 0");
            require(deadline != null && deadline.compareTo(lbGrace.plusSeconds(1)) >= 0, "drain.deadline", deadline,
                    ">= drain.lbGrace + 1s");
        }

        public static Drain defaults() {
            return new Drain(DEFAULT_LB_GRACE, DEFAULT_MIN_WINDOW, DEFAULT_DEADLINE, true);
        }

        public Drain withExpectRestart(boolean expect) {
            return new Drain(lbGrace, minWindow, deadline, expect);
        }
    }

    /**
     * How fast the server wants clients back after a restart or overload. With
     * {@code rampAfterStart}, a starting server admits the previous run's clients no faster than
     * an even spread over the drain window, also after a crash (1013 with a hint for the rest).
     */
    public record Reconnect(int targetRate, boolean rampAfterStart) {
        public static final int DEFAULT_TARGET_RATE = 2_000;

        public Reconnect {
            require(targetRate >= 1, "reconnect.targetRate", targetRate, ">= 1 per second");
        }

        public static Reconnect defaults() {
            return new Reconnect(DEFAULT_TARGET_RATE, true);
        }
    }

    /**
     * Server pings; silence past the timeout closes the connection. SSE streams get a comment
     * every {@code sseInterval} (they cannot answer, so only balancers' idle timers are reset).
     */
    public record Heartbeat(Duration interval, Duration timeout, Duration sseInterval) {
        public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(25);
        public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
        /** Below common balancer idle timeouts of 30-60 s, with room for one lost comment. */
        public static final Duration DEFAULT_SSE_INTERVAL = Duration.ofSeconds(15);

        public Heartbeat {
            require(interval != null && interval.toMillis() >= 100, "heartbeat.interval", interval, ">= 100ms");
            require(timeout != null && timeout.toMillis() >= 100, "heartbeat.timeout", timeout, ">= 100ms");
            require(sseInterval != null && sseInterval.toMillis() >= 100, "heartbeat.sseInterval", sseInterval,
                    ">= 100ms");
        }

        public static Heartbeat defaults() {
            return new Heartbeat(DEFAULT_INTERVAL, DEFAULT_TIMEOUT, DEFAULT_SSE_INTERVAL);
        }
    }

    /** Origins allowed to open WebSockets (empty = any), trusted proxies, publishers of auth.mode none. */
    public record Security(List<String> allowedOrigins, List<String> trustedProxies, List<String> publishAllowedFrom) {
        /** An RFC 6454 serialised origin: scheme, host (name, IPv4 or [IPv6]), optional port. */
        private static final Pattern ORIGIN = Pattern.compile(
                "[a-z][a-z0-9+.-]*://([a-z0-9-]+(\\.[a-z0-9-]+)*|\\[[0-9a-f:.]+\\])(:[0-9]{1,5})?");

        public Security {
            require(allowedOrigins != null, "security.allowedOrigins", null, "a list");
            require(trustedProxies != null, "security.trustedProxies", null, "a list");
            allowedOrigins = List.copyOf(allowedOrigins);
            trustedProxies = List.copyOf(trustedProxies);
            require(publishAllowedFrom != null, "security.publishAllowedFrom", null, "a list");
            publishAllowedFrom = List.copyOf(publishAllowedFrom);
            for (String o : allowedOrigins) {
                // compared with the Origin header byte for byte, so it must be in the form browsers send
                require(o != null && ORIGIN.matcher(o).matches(), "security.allowedOrigins", o,
                        "origins such as https://app.example or http://localhost:8080: scheme://host[:port], "
                                + "lowercase, no path, no trailing slash");
            }
            for (String p : trustedProxies) {
                require(p != null && p.matches("[0-9a-fA-F:.]+(/\\d{1,3})?"), "security.trustedProxies", p,
                        "IP addresses or CIDR blocks");
            }
        }

        public Security(List<String> allowedOrigins, List<String> trustedProxies) {
            this(allowedOrigins, trustedProxies, AuthConfig.DEFAULT_PUBLISH_ALLOWED_FROM);
        }

        public static Security defaults() {
            return new Security(List.of(), List.of());
        }

        public Security withPublishAllowedFrom(List<String> blocks) {
            return new Security(allowedOrigins, trustedProxies, blocks);
        }
    }

    /**
     * Live fan-out. {@code coalesceWindow}: a topic's subscribers on one event loop (at least
     * {@code coalesceMinSubscribers} of them) whose events come more than two per window (their
     * recent mean gap under half of it) are written at most once per window: an event that comes
     * less than the window after the group's previous write waits for the rest of it, and the
     * events that follow within it reach each subscriber in the same write (fewer syscalls and
     * TCP segments, for at most the window of added latency). Slower topics, and an event after a
     * quiet spell, go at once: at two or fewer events per window a hold would merge little and
     * delay every other event. 0 = every event at once.
     * {@code coalesceMinSubscribers}: only a topic's subscribers on one event loop at least this
     * many are held (the saving is a write per subscriber; a handful would only wait).
     * {@code tcpNoDelay} false: live connections (WebSocket, SSE) leave Nagle's algorithm on, so
     * the kernel holds a subscriber's small writes while an earlier one is unacknowledged and
     * sends them in one segment: under load fewer segments and cheaper sends, for latency up to
     * the peer's delayed ACK; an event after a quiet spell still goes at once. HTTP (publishes,
     * history) always sends at once.
     * {@code warmup}: before the server is ready, a scratch server of the same classes on loopback takes
     * a few thousand publishes and fans them out to a hundred subscribers, so that the first minutes
     * after a start run the publish and fan-out paths compiled rather than paying for the JIT on
     * the core that serves the returning clients (see {@code LiveWarmup}).
     */
    public record Fanout(Duration coalesceWindow, int coalesceMinSubscribers, boolean tcpNoDelay, boolean warmup) {
        public static final Duration DEFAULT_COALESCE_WINDOW = Duration.ofMillis(30);
        public static final Duration MAX_COALESCE_WINDOW = Duration.ofMillis(50);
        public static final int DEFAULT_COALESCE_MIN_SUBSCRIBERS = 32;
        public static final boolean DEFAULT_TCP_NO_DELAY = true;
        public static final boolean DEFAULT_WARMUP = true;

        public Fanout {
            require(coalesceWindow != null && !coalesceWindow.isNegative()
                            && coalesceWindow.compareTo(MAX_COALESCE_WINDOW) <= 0,
                    "fanout.coalesceWindow", coalesceWindow, "0-50ms (0 = off)");
            require(coalesceMinSubscribers >= 1, "fanout.coalesceMinSubscribers", coalesceMinSubscribers, ">= 1");
        }

        public Fanout(Duration coalesceWindow, int coalesceMinSubscribers) {
            this(coalesceWindow, coalesceMinSubscribers, DEFAULT_TCP_NO_DELAY, DEFAULT_WARMUP);
        }

        public Fanout(Duration coalesceWindow) {
            this(coalesceWindow, DEFAULT_COALESCE_MIN_SUBSCRIBERS);
        }

        public Fanout withTcpNoDelay(boolean on) {
            return new Fanout(coalesceWindow, coalesceMinSubscribers, on, warmup);
        }

        public Fanout withWarmup(boolean on) {
            return new Fanout(coalesceWindow, coalesceMinSubscribers, tcpNoDelay, on);
        }

        public static Fanout defaults() {
            return new Fanout(DEFAULT_COALESCE_WINDOW, DEFAULT_COALESCE_MIN_SUBSCRIBERS, DEFAULT_TCP_NO_DELAY,
                    DEFAULT_WARMUP);
        }
    }

    static void require(boolean ok, String key, Object value, String expected) {
        if (!ok) {
            Object shown = value instanceof Duration d ? Durations.format(d) : value;
            throw new ConfigException(key + ": " + shown + " (expected: " + expected + ")");
        }
    }
}
