package io.pushd.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.ServerSocketChannel;
import io.pushd.server.admission.AdmissionControl;
import io.pushd.server.admission.ClientAddress;
import io.pushd.server.admission.ConnectionLimiter;
import io.pushd.server.auth.AccessControl;
import io.pushd.server.tls.ReloadingSslContext;
import io.pushd.server.pipeline.AdminInitializer;
import io.pushd.server.pipeline.DeferredInitializer;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.ConnectionCountCheckpoint;
import io.pushd.server.lifecycle.Drainer;
import io.pushd.server.lifecycle.Lifecycle;
import io.pushd.server.lifecycle.HintFile;
import io.pushd.server.lifecycle.RetryHints;
import io.pushd.server.lifecycle.ReturnPlan;
import io.pushd.server.lifecycle.ServerState;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.pipeline.AcceptErrorHandler;
import io.pushd.server.pipeline.HandlerNames;
import io.pushd.server.pipeline.PushServerInitializer;
import io.pushd.server.pipeline.ServerContext;
import io.pushd.server.replay.ReplayWarmup;
import io.pushd.server.session.Session;
import io.pushd.server.session.SessionContext;
import io.pushd.server.session.Sessions;
import io.pushd.server.store.ChronicleEventStore;
import io.pushd.server.cluster.RedisHistory;
import io.pushd.server.history.EventHistory;
import io.pushd.server.history.LocalSequencer;
import io.pushd.server.history.Sequencer;
import io.pushd.server.history.Publisher;
import io.pushd.server.topic.TopicHub;
import com.sun.management.UnixOperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import net.openhft.chronicle.core.time.SystemTimeProvider;
import net.openhft.chronicle.core.time.TimeProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's wiring: store, sequencer, publisher, fan-out, sessions and the listening socket,
 * with an explicit lifecycle ({@link ServerState}). {@link #drain()} is the orderly stop used for
 * SIGTERM (see {@link Drainer}); {@link #close()} the immediate one.
 */
public final class PushServer implements AutoCloseable {

    /** How often the store records how far its log has come (its damage check's mark). */
    private static final Duration LOG_END_EVERY = Duration.ofSeconds(1);
    private static final Logger log = LoggerFactory.getLogger(PushServer.class);
    private static final int PUBLISH_QUEUE_CAPACITY = 65_536;
    private static final Duration CONNECTION_COUNT_EVERY = Duration.ofSeconds(2);
    /** Fewer returning clients than this cannot make a herd: all at once is a millisecond of work. */
    static final int RAMP_MIN_CLIENTS = 100;
    /**
     * Added to a single node's own launch and start for the restart a drain plans the returns
     * after: the old process's stay after its first close, at its longest ({@link Drainer#LONGEST_CLOSE},
     * 6 s). With 2 s, a loaded machine's SSE drain that took 4 s to exit sent two thirds of 300
     * clients back before the next process was ready (CI): a client a few seconds late costs those
     * seconds, one too early a failed attempt and a longer backoff.
     */
    static final long EXIT_ALLOWANCE_MILLIS = Drainer.LONGEST_CLOSE.toMillis();
    /** The longest restart a drain waits for: clients of a node that starts slower do come back later. */
    static final long MAX_RETURNS_AFTER_MILLIS = 60_000;
    /** In the data directory: how long the last start's warm-ups took with the port open, the next one's estimate. */
    static final String WARMUP_FILE = "warmup-ms";
    /** The estimate when no start recorded one: the warm-ups took 5-7 s on this project's 2-core machine. */
    static final long DEFAULT_WARMUP_MILLIS = 5_000;

    private final ServerConfig config;
    private final Lifecycle lifecycle = new Lifecycle();
    /**
     * The single node's log; null in cluster mode, where Redis holds the history and each node
     * only its replay cache ({@code <store.dataDir>/cluster-cache}): nothing opens {@code log/} then.
     */
    private final ChronicleEventStore store;
    /** The store, or in cluster mode ({@code cluster.redisUri}) the history shared through Redis. */
    private final EventHistory history;
    private final Publisher publisher;
    private final TopicHub hub;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup workerGroup;
    private final Sessions sessions = new Sessions();
    private final RetryHints hints;
    private final Drainer drainer;
    private final ScheduledExecutorService housekeeping;
    private final ConnectionCountCheckpoint connectionCount;
    private final AdmissionControl admission;
    private final ConnectionLimiter tcpConnections;
    private final ServerMetrics metrics;
    private final Channel serverChannel;
    private final Channel adminChannel; // null without server.adminPort
    private final AccessControl access;
    private final ReloadingSslContext tls; // null without tls.certFile
    private final boolean scratch; // the live warm-up's server (LiveWarmup): quiet
    /** When clients sent away while this server does not serve come back; the drain's offset is set at READY. */
    private final ReturnPlan returns;

    /** Starts a server with the system clock. */
    public static PushServer start(ServerConfig config) throws InterruptedException {
        return new PushServer(config, SystemTimeProvider.INSTANCE, false, Duration.ZERO);
    }

    /**
     * Starts the daemon's server: {@code launched} is how long its process took to get here (the
     * JVM's launch, the configuration), which the next process takes too, so a drain counts it
     * into the restart it plans the clients' returns after ({@code drain.expectRestart}).
     */
    public static PushServer start(ServerConfig config, Duration launched) throws InterruptedException {
        return new PushServer(config, SystemTimeProvider.INSTANCE, false, launched);
    }

    /** Starts a server whose store reads time from {@code clock} (tests move it forward). */
    public static PushServer start(ServerConfig config, TimeProvider clock) throws InterruptedException {
        return new PushServer(config, clock, false, Duration.ZERO);
    }

    /** The live warm-up's scratch server: the same, with its start and stop logged at debug only. */
    static PushServer startScratch(ServerConfig config) throws InterruptedException {
        return new PushServer(config, SystemTimeProvider.INSTANCE, true, Duration.ZERO);
    }

    private PushServer(ServerConfig config, TimeProvider clock, boolean scratch, Duration launched)
            throws InterruptedException {
        long t0 = System.nanoTime();
        this.config = config;
        this.scratch = scratch;
        // keys and certificate first, off the event loops: a broken file stops the start before anything opens
        this.metrics = new ServerMetrics();
        this.access = AccessControl.start(config.authConfig(), Clock.systemUTC(), metrics::authDenied);
        this.tls = startTls(config, access);
        ServerConfig.Store sc = config.store();
        Transport chosen = Transport.choose(config.server().transport());
        Class<? extends ServerSocketChannel> channelType = chosen.serverChannel();
        this.bossGroup = new MultiThreadIoEventLoopGroup(1, chosen.io());
        this.workerGroup = new MultiThreadIoEventLoopGroup(ioThreads(config), chosen.io());
        // A single node binds its ports before its store's recovery, with accepting paused: after a
        // crash its clients come back from 0 s on, and the launch and the recovery take a second
        // or more, two under load. A client that connects meanwhile waits in the kernel's backlog
        // and is then told when to come back (ReturnPlan); a refused one would back off blind, for
        // twice as long. A cluster node binds once it can serve: while it connects to Redis, the
        // balancer should send its clients to another node rather than hold them here.
        boolean bindFirst = !scratch && !config.cluster().enabled();
        DeferredInitializer serving = new DeferredInitializer();
        DeferredInitializer adminServing = new DeferredInitializer();
        Channel listening = null;
        Channel adminListening = null;
        RedisHistory shared;
        try {
            if (bindFirst) {
                listening = bind(channelType, serving, config.server().port(), false);
                adminListening = config.server().adminPort() == null ? null
                        : bind(channelType, adminServing, config.server().adminPort(), false);
            }
            shared = openSharedHistory(config, access, tls);
            this.store = shared != null ? null : new ChronicleEventStore(Path.of(sc.dataDir()), sc.retentionAge(),
                    sc.retentionCount(), sc.dedupeWindow(), sc.fsync(), clock, sc.minFreeBytes());
        } catch (Exception e) { // a port in use (Netty rethrows it undeclared), a data directory that cannot be used
            shutDownEventLoops(); // which closes the ports bound
            access.close();
            if (tls != null) {
                tls.close();
            }
            throw e;
        }
        this.history = shared != null ? shared : store;
        this.hub = new TopicHub(history::epoch, PooledByteBufAllocator.DEFAULT, metrics,
                config.fanout().coalesceWindow(), config.fanout().coalesceMinSubscribers());
        Sequencer sequencer = shared != null ? shared.sequencer(sc)
                : new LocalSequencer(store.heads(), config.limits().maxTopics());
        if (shared != null) {
            shared.start(hub);
            registerClusterGauges(shared);
        }
        // An idle writer's publish runs on its event loop where a batch waits on nothing but memory:
        // no Redis, no msync, a disk with room (a full one is probed at each append).
        this.publisher = new Publisher(history, sequencer, hub, metrics, clock::currentTimeMillis,
                PUBLISH_QUEUE_CAPACITY,
                shared == null && !sc.fsync() && sc.appendOnEventLoop() ? store.storage()::writable : null);
        metrics.gaugePerTransport("push.connections", "open WebSocket connections and SSE streams", sessions::size);
        this.housekeeping = Executors.newSingleThreadScheduledExecutor(PushServer::housekeepingThread);
        if (store != null) {
            registerStoreGauges(clock);
            long every = sc.retentionCheckInterval().toMillis();
            housekeeping.scheduleWithFixedDelay(this::enforceRetention, every, every, TimeUnit.MILLISECONDS);
            housekeeping.scheduleWithFixedDelay(() -> publisher.runOnWriter(store::markLogEnd),
                    LOG_END_EVERY.toMillis(), LOG_END_EVERY.toMillis(), TimeUnit.MILLISECONDS);
        } // in cluster mode Redis trims the history, and the replay cache its files (on the applier)
        this.connectionCount = new ConnectionCountCheckpoint(Path.of(sc.dataDir()));
        int expectedClients = connectionCount.read();

        this.hints = RetryHints.of(config);
        this.admission = new AdmissionControl(config.limits(), hints);
        if (config.reconnect().rampAfterStart() && expectedClients >= RAMP_MIN_CLIENTS) {
            long window = hints.windowMillis(expectedClients);
            admission.startRamp(expectedClients, window);
            log.info("start-up ramp: {} connection(s) before the restart, admitted no faster than over {} ms "
                    + "(+25 %) from the first upgrade until they are open again", expectedClients, window);
        }
        this.returns = new ReturnPlan(lifecycle, hints);
        this.drainer = new Drainer(config.drain(), lifecycle, hints, sessions,
                open -> connectionCount.writeFinal(expectedBack(open)), returns::afterDrainMillis);
        ClientAddress clientAddress = new ClientAddress(config.security().trustedProxies());
        ServerContext context = new ServerContext(config, history, publisher, lifecycle, clientAddress, metrics,
                new SessionContext(config.limits(), history, hub, lifecycle, hints, admission, sessions, metrics,
                        access, returns));
        this.tcpConnections = tcpCaps(config, clientAddress, metrics, scratch);
        try {
            // Cluster mode reads replays from RedisHistory (its ring, its cache): a warm-up on the
            // local store would compile the call sites for the wrong class and be thrown away.
            boolean replayWarmup = sc.replayWarmup() && store != null;
            boolean liveWarmup = config.fanout().warmup() && store != null; // the same reason as the replay's
            long recordedWarmUps = -1;
            // The port accepts before the warm-ups (seconds): a client that reconnects meanwhile is
            // told when to come back (ReturnPlan) instead of being refused and backing off blind.
            serving.serve(new PushServerInitializer(context, tcpConnections, tls));
            if (config.server().adminPort() != null) {
                adminServing.serve(new AdminInitializer(context));
            }
            if (replayWarmup || liveWarmup) {
                recordedWarmUps = planWarmUps(Path.of(sc.dataDir()), expectedClients);
            }
            this.serverChannel = accept(listening, channelType, serving, config.server().port());
            this.adminChannel = config.server().adminPort() == null ? null
                    : accept(adminListening, channelType, adminServing, config.server().adminPort());
            if (replayWarmup || liveWarmup) { // (the live warm-up's scratch server has neither)
                warmUp(Path.of(sc.dataDir()), channelType, replayWarmup, liveWarmup, recordedWarmUps);
            }
        } catch (Exception e) { // Netty's bind rethrows a checked exception undeclared: close the store on it too
            shutdownResources();
            throw e;
        }
        housekeeping.scheduleWithFixedDelay(() -> connectionCount.write(expectedBack(sessions.size())),
                CONNECTION_COUNT_EVERY.toMillis(), CONNECTION_COUNT_EVERY.toMillis(), TimeUnit.MILLISECONDS);
        long startupMillis = (System.nanoTime() - t0) / 1_000_000;
        // A single node's next process serves only once this one has exited and it has started,
        // which takes about as long as this start took; a cluster's other nodes serve at once.
        returns.afterDrain(scratch || shared != null || !config.drain().expectRestart() ? 0
                : Math.min(MAX_RETURNS_AFTER_MILLIS, launched.toMillis() + startupMillis + EXIT_ALLOWANCE_MILLIS));
        lifecycle.advanceTo(ServerState.READY);
        if (!scratch) {
            logReady(chosen.name(), startupMillis);
            AccessControl.warnIfOpen(config.auth().mode(), config.server().host(),
                    config.security().publishAllowedFrom());
        }
    }

    /**
     * Runs the warm-ups with the port open but the server not yet READY, so that the first clients
     * replay and publish through compiled code, then collects their garbage. How long this took is
     * the next start's estimate of when its clients can be served.
     */
    private void warmUp(Path dataDir, Class<? extends ServerSocketChannel> channelType, boolean replay, boolean live,
                        long recorded) throws InterruptedException {
        long t0 = System.nanoTime();
        long expected = recorded < 0 ? DEFAULT_WARMUP_MILLIS : recorded;
        log.info("listening on {} during the warm-ups (~{} ms, {}): subscribers are sent back with 1012 "
                + "and a hint to return after them", serverChannel.localAddress(), expected,
                recorded < 0 ? "a guess" : "as long as the last start's");
        if (replay) {
            warmUpReplay(dataDir, channelType);
        }
        if (live) {
            warmUpLive(dataDir);
        }
        collectStartGarbage();
        new HintFile(dataDir.resolve(WARMUP_FILE)).write((System.nanoTime() - t0) / 1_000_000);
    }

    /**
     * Before the port accepts: the clients sent away during the warm-ups come back after them, as
     * long as the last start's took. Returns that time, or -1 when no start has recorded one.
     */
    private long planWarmUps(Path dataDir, int expectedClients) {
        long recorded = new HintFile(dataDir.resolve(WARMUP_FILE)).read(-1);
        returns.listening(recorded < 0 ? DEFAULT_WARMUP_MILLIS : recorded, expectedClients);
        return recorded;
    }

    /**
     * The warm-ups leave the young generation nearly full of their garbage (scratch stores,
     * requests, frames), so the first collection under real traffic would come within seconds of
     * the start and stop every thread for tens of milliseconds (seen: 38 ms, a young collection of
     * the serial collector the JVM picks on one core, in the first ten seconds of a 1k × 100
     * fan-out). Collected now, before the server is ready, it costs the start as much once, and the
     * first collection under traffic comes much later, with the traffic's own garbage only.
     * {@code -XX:+DisableExplicitGC} makes it a no-op.
     */
    private static void collectStartGarbage() {
        long t0 = System.nanoTime();
        System.gc();
        log.info("the warm-ups' garbage collected in {} ms, before the server is ready",
                (System.nanoTime() - t0) / 1_000_000);
    }

    /** A start-up warm-up: its work, and the line that says what it did. */
    @FunctionalInterface
    private interface Warmup {
        String run() throws Exception;
    }

    /**
     * A warm-up is an optimisation: one that fails is logged and the start goes on, and on a disk
     * short of room for its scratch log it is skipped (a mapped write on a full disk faults).
     * {@code without} says what the clients pay instead.
     */
    private void warmUp(String name, String without, Warmup warmup) throws InterruptedException {
        long free = store.storage().freeBytes();
        if (free < store.storage().minFreeBytes() + ReplayWarmup.DISK_BYTES) {
            log.warn("{} skipped: {} bytes free on the data directory's disk, it needs {} above "
                    + "store.minFreeBytes; {}", name, free, ReplayWarmup.DISK_BYTES, without);
            return;
        }
        try {
            log.info("{}: {}", name, warmup.run());
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception | LinkageError | InternalError e) {
            // Netty's sync() rethrows checked ones (a failed bind) undeclared; an InternalError is a
            // fault in the scratch log's mapped file (the disk filled meanwhile), which it deletes
            log.warn("{} failed ({}); {}", name, e.toString(), without);
        }
    }

    private void warmUpReplay(Path dataDir, Class<? extends ServerSocketChannel> channelType)
            throws InterruptedException {
        warmUp("replay warm-up", "the first replays compile the replay path", () -> {
            ReplayWarmup.Result r = ReplayWarmup.run(dataDir, workerGroup, channelType);
            return r.replayedEvents() + " events replayed in " + r.millis() + " ms (store.replayWarmup)";
        });
    }

    private void warmUpLive(Path dataDir) throws InterruptedException {
        warmUp("live warm-up", "the first publishes compile the publish path", () -> {
            LiveWarmup.Result r = LiveWarmup.run(config, dataDir);
            return r.published() + " events published to " + (LiveWarmup.SUBSCRIBERS + LiveWarmup.FEW)
                    + " subscribers in " + r.millis() + " ms, the JIT's threads compiling for " + r.compileMillis()
                    + " ms of it (fanout.warmup)";
        });
    }

    /** The TLS context when {@code tls.*} is set, else null; closes {@code access} when it cannot start. */
    private static ReloadingSslContext startTls(ServerConfig config, AccessControl access) {
        try {
            return config.tls().enabled() ? ReloadingSslContext.start(config.tls()) : null;
        } catch (RuntimeException e) {
            access.close();
            throw e;
        }
    }

    /**
     * What the next start should expect back: the open connections, or while the start-up ramp
     * still waits for the previous run's clients, as many as it expects (a crash during the ramp
     * must not leave the next start expecting only those back so far).
     */
    private int expectedBack(int open) {
        return Math.max(open, admission.rampExpected());
    }

    /** {@code server.ioThreads}, where 0 means two per core. */
    private static int ioThreads(ServerConfig config) {
        return config.server().ioThreads() == 0
                ? Runtime.getRuntime().availableProcessors() * 2 : config.server().ioThreads();
    }

    /**
     * The shared history of cluster mode (its data directory created, for the replay cache and the
     * connection count), or null for a single node; closes what started before when it cannot open.
     */
    private static RedisHistory openSharedHistory(ServerConfig config, AccessControl access, ReloadingSslContext tls) {
        if (!config.cluster().enabled()) {
            return null;
        }
        try {
            java.nio.file.Files.createDirectories(Path.of(config.store().dataDir()));
            return new RedisHistory(config);
        } catch (java.io.IOException | RuntimeException e) {
            access.close();
            if (tls != null) {
                tls.close();
            }
            if (e instanceof java.io.IOException io) {
                throw new java.io.UncheckedIOException("cannot create data directory " + config.store().dataDir(), io);
            }
            throw (RuntimeException) e;
        }
    }

    private static Thread housekeepingThread(Runnable r) {
        Thread t = new Thread(r, "push-housekeeping");
        t.setDaemon(true);
        return t;
    }

    /** The caps on TCP connections of every kind, derived from the open-file limit where not configured. */
    private static ConnectionLimiter tcpCaps(ServerConfig config, ClientAddress clientAddress, ServerMetrics metrics,
                                             boolean quiet) {
        long openFiles = openFileLimit();
        ConnectionLimiter caps = ConnectionLimiter.of(config.limits(), openFiles, clientAddress);
        metrics.gauge("push.tcp.connections", "open TCP connections of every kind", null, caps,
                ConnectionLimiter::connections);
        if (!quiet) {
            log.info("TCP connection caps: {} in all, {} per address (open-file limit {})", caps.maxTotal(),
                    caps.maxPerAddress(), openFiles < 0 ? "unknown" : openFiles);
        }
        return caps;
    }

    /**
     * Milliseconds from a drain's first close until the clients can be served again, where the
     * drain's planned returns begin: for a single node with {@code drain.expectRestart}, its own
     * launch and start plus {@link #EXIT_ALLOWANCE_MILLIS} (at most {@link #MAX_RETURNS_AFTER_MILLIS});
     * otherwise 0.
     */
    public long returnsAfterMillis() {
        return returns.afterDrainMillis();
    }

    private void logReady(String transport, long startupMillis) {
        log.info("push server ready on {} ({}{}), epoch {}, {} events recovered in {} ms{}",
                serverChannel.localAddress(), transport, tls == null ? "" : ", TLS",
                store != null ? store.epoch() : "per topic (cluster mode, in Redis)",
                store != null ? store.recoveredEvents() : 0, startupMillis,
                adminChannel == null ? "" : "; metrics and probes on " + adminChannel.localAddress());
    }

    private void registerStoreGauges(TimeProvider clock) {
        metrics.gauge("push.store.disk", "size of the log files", "bytes", store, ChronicleEventStore::diskBytes);
        metrics.gauge("push.store.oldest.event.age", "age of the oldest kept event", "seconds", () -> {
            long ts = store.oldestTimestampMillis();
            return ts < 0 ? Double.NaN : (clock.currentTimeMillis() - ts) / 1000.0;
        });
        metrics.gauge("push.topics", "topics in this epoch", null, store, s -> s.topicCount());
        metrics.gauge("push.store.writable", "1 while publishes are stored, 0 while refused for want of disk space",
                null, store, s -> s.writable() ? 1 : 0);
        metrics.gauge("push.store.free", "usable space of the data directory's file system", "bytes",
                store.storage(), g -> g.freeBytes());
    }

    /** Cluster mode: no single-node store, so no {@code push.store.*}; topics and the replay cache instead. */
    private void registerClusterGauges(RedisHistory shared) {
        metrics.gauge("push.topics", "topics this node follows (subscribed in Redis, not idle)", null, shared,
                RedisHistory::topicCount);
        metrics.gauge("push.cluster.cache.disk", "size of the replay cache's files", "bytes", shared,
                h -> h.cache() == null ? 0 : h.cache().diskBytes());
        metrics.gauge("push.cluster.cache.writable", "1 while the node's replay cache caches, 0 while it cannot"
                + " (no directory, disk full): replays then read Redis", null, shared,
                h -> h.cache() != null && h.cache().writable() ? 1 : 0);
        metrics.gauge("push.cluster.history.pages", "pages read from Redis for replays and history requests"
                + " (what the replay cache did not hold)", null, shared, h -> h.pageReads());
        metrics.gauge("push.cluster.replicas.short", "publish batches fewer replicas than cluster.replicasToAck"
                + " acknowledged in time, since start", null, shared, RedisHistory::replicaShortAcks);
    }

    /**
     * Accepting on {@code listening}, bound with accepting paused ({@link DeferredInitializer}), or
     * on a port bound now when there is none.
     */
    private Channel accept(Channel listening, Class<? extends ServerSocketChannel> channelType,
                           DeferredInitializer initializer, int port) throws InterruptedException {
        if (listening == null) {
            return bind(channelType, initializer, port, true);
        }
        listening.config().setAutoRead(true); // the connections waiting in the backlog first
        return listening;
    }

    private Channel bind(Class<? extends ServerSocketChannel> channelType, DeferredInitializer initializer, int port,
                         boolean accepting) throws InterruptedException {
        Channel listening = new ServerBootstrap()
                .group(bossGroup, workerGroup)
                .channel(channelType)
                .option(ChannelOption.AUTO_READ, accepting) // a server channel's read is its accept
                .option(ChannelOption.SO_REUSEADDR, true) // rebind at once after a restart
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(32 * 1024, 256 * 1024))
                .childHandler(initializer)
                .bind(new InetSocketAddress(config.server().host(), port))
                .sync()
                .channel();
        // after the bind, so it comes after Netty's acceptor (which pauses accepting after a failure)
        listening.pipeline().addLast(HandlerNames.ACCEPT_ERRORS, new AcceptErrorHandler(metrics));
        return listening;
    }

    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** The bound {@code server.adminPort}, or -1 when there is none. */
    public int adminPort() {
        return adminChannel == null ? -1 : ((InetSocketAddress) adminChannel.localAddress()).getPort();
    }

    /** The TLS context (tests watch its reloads), or null. */
    public ReloadingSslContext tls() {
        return tls;
    }

    public ServerState state() {
        return lifecycle.state();
    }

    /** The single node's epoch (cluster mode: per topic, {@code history().epoch(topic)}). */
    public String epoch() {
        if (store == null) {
            throw new IllegalStateException("cluster mode: the epoch is per topic (history().epoch(topic))");
        }
        return store.epoch();
    }

    /** What subscriptions and the HTTP API read: the store, or the shared history in cluster mode. */
    public EventHistory history() {
        return history;
    }

    /** Tests and tools: the publish path (who runs a publish: {@code store.appendOnEventLoop}). */
    public Publisher publisher() {
        return publisher;
    }

    /** The single node's log, or null in cluster mode. */
    public ChronicleEventStore store() {
        return store;
    }

    /** The open sessions of every transport. */
    public Sessions sessions() {
        return sessions;
    }

    public ServerMetrics metrics() {
        return metrics;
    }

    public int liveConnections() {
        return sessions.size();
    }

    /** Runs retention now, on the writer thread; returns when it is done. */
    public void enforceRetention() {
        if (store == null) {
            return; // cluster mode: Redis and the replay cache keep their own retention
        }
        try {
            publisher.runOnWriter(store::enforceRetention).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("retention check failed", e);
        }
    }

    /** The orderly stop (see {@link Drainer}), then {@link #close()}. */
    public void drain() {
        if (drainer.drain()) {
            close();
        }
    }

    /** RLIMIT_NOFILE of this process (the JVM raises the soft limit to the hard one), or -1. */
    static long openFileLimit() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean unix
                ? unix.getMaxFileDescriptorCount() : -1;
    }

    /** Stops at once: closes sockets, finishes queued publishes, closes the store. Idempotent. */
    @Override
    public void close() {
        if (!lifecycle.advanceTo(ServerState.STOPPED)) {
            return;
        }
        serverChannel.close().awaitUninterruptibly();
        if (adminChannel != null) {
            adminChannel.close().awaitUninterruptibly();
        }
        List<Session> open = sessions.snapshot();
        open.forEach(Session::abort);
        Sessions.awaitClosed(open, Duration.ofSeconds(2));
        shutdownResources();
        if (!scratch) {
            log.info("push server stopped");
        }
    }

    private void shutdownResources() {
        housekeeping.shutdownNow();
        try {
            publisher.close(); // answers every publish already queued
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        shutDownEventLoops();
        if (history != store) {
            try {
                history.close();
            } catch (java.io.IOException | RuntimeException e) {
                log.warn("closing the shared history failed", e);
            }
        }
        if (store != null) {
            store.close();
        }
        access.close();
        if (tls != null) {
            tls.close();
        }
    }

    private void shutDownEventLoops() {
        bossGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
        workerGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
    }
}
