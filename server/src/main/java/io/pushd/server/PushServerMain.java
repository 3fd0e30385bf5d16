package io.pushd.server;

import io.pushd.server.config.ConfigException;
import io.pushd.server.config.ConfigLoader;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.CompilerThreadPriority;
import io.pushd.server.lifecycle.JitCompilers;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * {@code java -jar push-server.jar}: reads the configuration (defaults, then the file, then
 * {@code PUSH_*} environment variables, then flags), starts the server, and drains on SIGTERM.
 * A second SIGTERM, or the drain deadline, forces the exit.
 */
@Command(name = "push-server", mixinStandardHelpOptions = true, version = "push-server 0.1.0",
        description = "WebSocket push server: ordered, replayable topics that survive restarts.",
        sortOptions = false)
public final class PushServerMain implements Callable<Integer> {

    static {
        // Before any Chronicle class loads: the daemon makes no outbound connection of its own.
        System.setProperty("chronicle.analytics.disable", "true");
        System.setProperty("chronicle.announcer.disable", "true");
        System.setProperty("chronicle.disk.monitor.disable", "true");
    }

    static final int EXIT_CONFIG = 2;
    /** Something the node needs is not there yet (Redis unreachable at start): a supervisor's restart can help. */
    static final int EXIT_UNAVAILABLE = 1;
    static final Path DEFAULT_CONFIG = Path.of("config", "server.yaml");

    @Option(names = "--config", paramLabel = "FILE",
            description = "YAML configuration file (default: config/server.yaml when it exists).")
    Path configFile;

    @Option(names = "--port", paramLabel = "N", description = "Listening port (server.port).")
    Integer port;

    @Option(names = "--host", paramLabel = "ADDR", description = "Listening address (server.host).")
    String host;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "Data directory (store.dataDir).")
    String dataDir;

    @Option(names = "--set", paramLabel = "KEY=VALUE",
            description = "Override any key, e.g. --set store.fsync=true (repeatable).")
    Map<String, String> sets = new LinkedHashMap<>();

    @Option(names = "--print-config", description = "Print the effective configuration and exit.")
    boolean printConfig;

    public static void main(String[] args) {
        int code = new CommandLine(new PushServerMain()).execute(args);
        if (code != 0 || Boolean.getBoolean("push.exitAfterMain")) {
            System.exit(code);
        }
    }

    @Override
    public Integer call() throws Exception {
        ServerConfig config;
        try {
            config = loadConfig(System.getenv());
        } catch (ConfigException e) {
            System.err.println("configuration error: " + e.getMessage());
            return EXIT_CONFIG;
        }
        if (printConfig) {
            System.out.print(ConfigLoader.toYaml(config));
            return 0;
        }
        // cluster.redisUri may hold a password: its serializer masks it (Cluster.Redacting).
        LoggerFactory.getLogger(PushServerMain.class)
                .info("effective configuration:\n{}", ConfigLoader.toYaml(config).stripTrailing());
        JitCompilers.log(LoggerFactory.getLogger(PushServerMain.class), config.tls().enabled());
        // The signals are ours from before the start: a SIGTERM during the start (a warm-up, a
        // bind) then stops the server cleanly as soon as it is up, rather than killing the JVM with
        // the store open, which would leave the data directory marked as running.
        Stop stop = new Stop(config.drain().deadline());
        PushServer server;
        try {
            server = startOnceMoreIfRedisDidNotSay(config);
        } catch (ConfigException e) { // a key or certificate file that cannot be used
            System.err.println("configuration error: " + e.getMessage());
            return EXIT_CONFIG;
        } catch (io.lettuce.core.RedisException e) {
            // cluster mode. Redis answering but refusing us (a wrong or missing password, too old a
            // version) is the operator's to fix, like a bad key: exit 2, which supervisors are told
            // not to retry. Redis not answering at all may only be starting after this node: exit 1,
            // which they retry. One line either way, never the password.
            String refusal = redisRefusal(e);
            String where = io.pushd.server.config.Cluster.redacted(config.cluster().redisUri());
            if (refusal != null) {
                System.err.println("cluster error: cannot use Redis at " + where + ": " + refusal);
                return EXIT_CONFIG;
            }
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            System.err.println("cluster error: cannot reach Redis at " + where + ": " + root.getMessage()
                    + " (exit 1: a supervisor's restart retries)");
            return EXIT_UNAVAILABLE;
        } catch (Exception e) { // Netty's bind rethrows its checked exceptions undeclared
            // One line, as for a configuration error (the port in use, the data directory in use
            // or not writable), exit 1: a supervisor's restart retries, and it may be passing.
            LoggerFactory.getLogger(PushServerMain.class).debug("start failed", e);
            System.err.println("start failed: " + describe(e) + " (exit 1)");
            return EXIT_UNAVAILABLE;
        }
        lowerCompilerThreads(config.server().compilerThreadNice());
        stop.serve(server).await();
        System.exit(0);
        return 0;
    }

    /**
     * The first SIGTERM or SIGINT drains, with a watchdog that forces the exit at the deadline;
     * a second one forces it at once. A signal during the start is kept until the server is up.
     * The latch of {@link #serve} opens when the drain has finished.
     */
    private static final class Stop {
        private final Duration deadline;
        private final CountDownLatch stopped = new CountDownLatch(1);
        private final AtomicInteger signals = new AtomicInteger();
        private PushServer server; // guarded by this
        private boolean requested; // guarded by this

        Stop(Duration deadline) {
            this.deadline = deadline;
            SignalHandler onSignal = sig -> onSignal();
            Signal.handle(new Signal("TERM"), onSignal);
            Signal.handle(new Signal("INT"), onSignal);
        }

        /** From here on a signal drains {@code started}; one that came during the start drains it now. */
        CountDownLatch serve(PushServer started) {
            boolean now;
            synchronized (this) {
                server = started;
                now = requested;
            }
            if (now) {
                drain(started);
            }
            return stopped;
        }

        private void onSignal() {
            PushServer s;
            synchronized (this) {
                s = server;
                if (s == null) {
                    if (requested) {
                        // a second signal during the start: the store may be opening, halt
                        System.err.println("forced exit: second signal during the start");
                        Runtime.getRuntime().halt(0);
                    }
                    requested = true;
                    return;
                }
            }
            if (signals.incrementAndGet() > 1) {
                forceExit(s, "second signal");
                return;
            }
            drain(s);
        }

        private void drain(PushServer s) {
            Thread drain = new Thread(() -> {
                s.drain();
                stopped.countDown();
            }, "push-drain");
            drain.start();
            Thread watchdog = new Thread(() -> {
                try {
                    Thread.sleep(deadline.toMillis());
                } catch (InterruptedException e) {
                    return;
                }
                forceExit(s, "drain deadline passed");
            }, "push-drain-deadline");
            watchdog.setDaemon(true);
            watchdog.start();
        }
    }

    /**
     * Once ready (the warm-ups, which want the JIT at full speed, are over): the JIT's compiler
     * threads behind the event loops ({@link CompilerThreadPriority}); the daemon only, not a
     * server embedded in another program or a test.
     */
    private static void lowerCompilerThreads(int nice) {
        if (nice == 0) {
            return;
        }
        CompilerThreadPriority.Result r = CompilerThreadPriority.lower(nice);
        org.slf4j.Logger log = LoggerFactory.getLogger(PushServerMain.class);
        if (r.problem() == null) {
            log.info("JIT compiler threads at nice {} ({} threads; server.compilerThreadNice)", r.nice(), r.threads());
        } else {
            log.warn("JIT compiler threads left at their priority ({} of them set to nice {}): {}", r.threads(),
                    r.nice(), r.problem());
        }
    }

    /** The exception's message and its causes' (up to three), without a stack trace. */
    static String describe(Throwable e) {
        StringBuilder b = new StringBuilder();
        int depth = 0;
        for (Throwable t = e; t != null && depth < 4; t = t.getCause(), depth++) {
            String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
            if (b.indexOf(m) >= 0) {
                continue; // a wrapper repeating its cause
            }
            if (b.length() > 0) {
                b.append(": ");
            }
            b.append(m);
        }
        return b.toString();
    }

    /**
     * Exits now, without closing the store: the writer may be inside an append, and unmapping the
     * file under it could crash the JVM. Nothing acknowledged is lost: it is in the page cache (and
     * msynced with fsync on); the next start recovers the log as after a crash on the same boot.
     */
    private static void forceExit(PushServer server, String why) {
        System.err.println("forced exit: " + why + " (" + server.liveConnections() + " connection(s) left)");
        Runtime.getRuntime().halt(0);
    }

    ServerConfig loadConfig(Map<String, String> env) {
        Path file = configFile;
        if (file == null && env.containsKey("PUSH_CONFIG")) {
            file = Path.of(env.get("PUSH_CONFIG"));
        }
        if (file == null && Files.isRegularFile(DEFAULT_CONFIG)) {
            file = DEFAULT_CONFIG;
        }
        if (file != null && !Files.isRegularFile(file)) {
            throw new ConfigException("config file " + file + ": not found");
        }
        Map<String, String> overrides = new LinkedHashMap<>(ConfigLoader.fromEnvironment(env));
        if (host != null) {
            overrides.put("server.host", host);
        }
        if (port != null) {
            overrides.put("server.port", port.toString());
        }
        if (dataDir != null) {
            overrides.put("store.dataDir", dataDir);
        }
        overrides.putAll(sets);
        return ConfigLoader.load(file, overrides);
    }

    /**
     * Starts the server; in cluster mode a first failure in which Redis said nothing (no refusal
     * to read) is tried once more, a quarter of a second later, before it counts as Redis not
     * answering. Lettuce fails a refused handshake from the listener of the close it starts, so
     * now and then the close is seen first and a wrong password reads "Connection closed
     * prematurely" (one CI run in many): exit 1, retried forever by a supervisor, instead of 2.
     */
    private static PushServer startOnceMoreIfRedisDidNotSay(ServerConfig config) throws InterruptedException {
        // how long the JVM and the configuration took: the next process takes it again after a drain
        Duration launched = Duration.ofMillis(ManagementFactory.getRuntimeMXBean().getUptime());
        try {
            return PushServer.start(config, launched);
        } catch (io.lettuce.core.RedisException e) {
            if (redisRefusal(e) != null) {
                throw e;
            }
            LoggerFactory.getLogger(PushServerMain.class).info("Redis did not answer at start; trying once more");
            Thread.sleep(250);
            return PushServer.start(config, launched); // everything the first attempt opened is closed again
        }
    }

    /** What Redis answered when it refused us at start (an error reply, or too old), or null when it never answered. */
    static String redisRefusal(Throwable failure) {
        java.util.ArrayDeque<Throwable> todo = new java.util.ArrayDeque<>(java.util.List.of(failure));
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        while (!todo.isEmpty()) {
            Throwable t = todo.poll();
            if (!seen.add(t)) {
                continue;
            }
            // WRONGPASS, NOAUTH, too old: what only the operator can fix. LOADING, BUSY, CLUSTERDOWN
            // and the like pass by themselves: those count as not answering yet (exit 1, retried).
            if (t instanceof io.lettuce.core.RedisCommandExecutionException && t.getMessage() != null
                    && (t.getMessage().startsWith("WRONGPASS") || t.getMessage().startsWith("NOAUTH")
                    || t.getMessage().contains("is too old") || t.getMessage().contains("redis_version"))) {
                return t.getMessage();
            }
            if (t.getCause() != null) {
                todo.add(t.getCause());
            }
            todo.addAll(java.util.List.of(t.getSuppressed()));
        }
        return null;
    }
}
