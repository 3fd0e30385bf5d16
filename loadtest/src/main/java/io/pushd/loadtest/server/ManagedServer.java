package io.pushd.loadtest.server;

import io.pushd.loadtest.Deadline;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server fat jar as a child process ({@code java -jar push-server.jar}) on a free loopback
 * port with a temp data directory. A restart keeps the port and the data directory, so the epoch
 * and every stored event survive and the clients find it again. Each incarnation logs to
 * {@code server-N.log} in the log directory.
 *
 * <p>A JVM shutdown hook kills the child, so an interrupted load test leaves no server behind.
 */
public final class ManagedServer implements ServerControl {

    private static final Logger log = LoggerFactory.getLogger(ManagedServer.class);
    /**
     * Above what the server's own start may take: its warm-ups give up after 10 s (replay) and
     * 20 s (live) plus a 3 s settle, and on a contended machine (a parallel build: CI ran a
     * crash restart that needed more than 30 s) they take that long. The clients wait for it
     * too, refused with 1012 and a hint meanwhile; how long a start takes is not what a load
     * test checks.
     */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    /** Above the server's own drain deadline (25 s), so a graceful stop is never cut short by us. */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(40);

    private final Path jar;
    private final Path dataDir;
    private final Path logDir;
    private final List<String> sets;
    private final int port;
    private final boolean deleteDataDir;
    private final Thread killOnExit;
    private volatile Process process;
    private int incarnation;

    private ManagedServer(Path jar, Path dataDir, boolean deleteDataDir, Path logDir, List<String> sets, int port) {
        this.jar = jar;
        this.dataDir = dataDir;
        this.deleteDataDir = deleteDataDir;
        this.logDir = logDir;
        this.sets = List.copyOf(sets);
        this.port = port;
        // Ctrl-C or SIGTERM of the load test: the server goes, and its temp data directory with it
        this.killOnExit = new Thread(() -> {
            Process p = process;
            if (p != null) {
                p.destroyForcibly();
                try {
                    p.waitFor(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (deleteDataDir) {
                deleteRecursively(dataDir);
            }
        }, "push-loadtest-kill-server");
    }

    /**
     * Starts the jar and waits until it is ready.
     *
     * @param dataDir a data directory to use, or null for a fresh temp one (deleted on close)
     * @param sets    {@code key=value} server settings, each passed as {@code --set}
     */
    public static ManagedServer start(Path jar, Path dataDir, Path logDir, List<String> sets, Deadline deadline)
            throws IOException, InterruptedException {
        boolean temp = dataDir == null;
        Files.createDirectories(logDir); // first: a log directory that cannot be made leaves no temp directory
        Path dir = temp ? Files.createTempDirectory("push-loadtest-data-") : dataDir;
        ManagedServer server = new ManagedServer(jar.toAbsolutePath(), dir.toAbsolutePath(), temp,
                logDir.toAbsolutePath(), sets, freeLoopbackPort());
        Runtime.getRuntime().addShutdownHook(server.killOnExit);
        try {
            server.launch(deadline);
        } catch (IOException | InterruptedException | RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    @Override
    public String host() {
        return "127.0.0.1";
    }

    @Override
    public int port() {
        return port;
    }

    public Path dataDir() {
        return dataDir;
    }

    @Override
    public String describe() {
        Process p = process;
        return "child process java -jar " + jar + " on 127.0.0.1:" + port + " (pid " + (p == null ? "-" : p.pid())
                + ", data " + dataDir + ", logs " + logDir + ")";
    }

    @Override
    public RestartTiming restart(RestartMode mode, Deadline deadline) throws InterruptedException {
        return restart(mode, deadline, triggered -> { });
    }

    /** Runs between the old process's exit and the new one's launch. */
    @FunctionalInterface
    public interface BeforeLaunch {
        void await(long triggeredNanos) throws InterruptedException;
    }

    /**
     * As {@link #restart(RestartMode, Deadline)}, launching the new process only once
     * {@code beforeLaunch} returns (a cluster node's clients are elsewhere meanwhile).
     */
    public RestartTiming restart(RestartMode mode, Deadline deadline, BeforeLaunch beforeLaunch)
            throws InterruptedException {
        Process old = process;
        long triggered = System.nanoTime();
        if (mode == RestartMode.GRACEFUL) {
            old.destroy(); // SIGTERM on Linux and macOS: the orderly drain
        } else {
            old.destroyForcibly(); // SIGKILL: no shutdown code runs
        }
        if (!old.waitFor(deadline.cap(STOP_TIMEOUT).toMillis(), TimeUnit.MILLISECONDS)) {
            old.destroyForcibly();
            old.waitFor(5, TimeUnit.SECONDS);
            deadline.check("waiting for the server to stop");
            throw new IllegalStateException("server pid " + old.pid() + " still running " + STOP_TIMEOUT.toSeconds()
                    + " s after " + (mode == RestartMode.GRACEFUL ? "SIGTERM" : "SIGKILL") + "; see " + currentLog());
        }
        long stopped = System.nanoTime();
        int exit = old.exitValue();
        log.info("server stopped ({}): exit {} after {} ms", mode.label(), exit, (stopped - triggered) / 1_000_000);
        beforeLaunch.await(triggered);
        try {
            launch(deadline);
        } catch (IOException e) {
            throw new UncheckedIOException("restarting the server", e);
        }
        long ready = System.nanoTime();
        log.info("server ready again {} ms after the {} restart was triggered", (ready - triggered) / 1_000_000,
                mode.label());
        return new RestartTiming(mode, triggered, stopped, ready, exit);
    }

    private void launch(Deadline deadline) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", jar.toString(), "--host", host(),
                "--port", Integer.toString(port), "--data-dir", dataDir.toString()));
        for (String s : sets) {
            cmd.add("--set");
            cmd.add(s);
        }
        incarnation++;
        Path out = currentLog();
        // The working directory is the log directory, so no config/server.yaml of the caller's
        // working directory changes the server under test.
        Process p = new ProcessBuilder(cmd)
                .directory(logDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        process = p;
        try {
            Probe.awaitReady(httpBase(), START_TIMEOUT, deadline, p::isAlive, "server (pid " + p.pid() + ")");
        } catch (IllegalStateException e) {
            throw new IllegalStateException(e.getMessage() + "; command: " + String.join(" ", cmd) + "; log: " + out, e);
        }
    }

    private Path currentLog() {
        return logDir.resolve("server-" + incarnation + ".log");
    }

    /** SIGTERM, then SIGKILL if it does not stop in time; deletes a temp data directory. */
    @Override
    public void close() {
        Process p = process;
        try {
            if (p != null && p.isAlive()) {
                p.destroy();
                if (!p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(5, TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
        if (deleteDataDir) {
            deleteRecursively(dataDir);
        }
    }

    /** Deletes {@code dir} and what it holds; logs what it cannot. */
    public static void deleteRecursively(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            log.warn("could not delete {}: {}", dir, e.toString());
        }
    }

    /** A loopback port that was free a moment ago. */
    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        }
    }
}
