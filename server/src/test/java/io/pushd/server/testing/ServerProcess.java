package io.pushd.server.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The packaged server ({@code java -jar push-server.jar}) as a child process on a loopback port.
 * Its working directory is a temp folder (so no {@code config/server.yaml} is picked up), its
 * stdout and stderr go to a log file there. The jar is found through the system property
 * {@code push.server.jar} that failsafe sets. No JVM flags are passed unless a test names some
 * ({@link #launch(Path, int, Path, List, String...)}): the jar's manifest has to make
 * {@code java -jar} work on its own.
 */
public final class ServerProcess implements AutoCloseable {

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(20);
    private static final AtomicInteger STARTS = new AtomicInteger();
    private static final HttpClient PROBE = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();

    private final Process process;
    private final int port;
    private final Path dataDir;
    private final Path log;
    private final List<String> command;

    private ServerProcess(Process process, int port, Path dataDir, Path log, List<String> command) {
        this.command = command;
        this.process = process;
        this.port = port;
        this.dataDir = dataDir;
        this.log = log;
    }

    /** A port that was free a moment ago (bind to 0, read it, close). */
    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free port", e);
        }
    }

    /**
     * Starts the server and waits (at most 20 s) until {@code GET /readyz} answers 200 (its port
     * opens before its warm-ups, and {@code /healthz} answers 200 from then on).
     *
     * @param workDir working directory of the child; its log file goes there too
     * @param sets    {@code key=value} overrides, each passed as {@code --set key=value}
     */
    public static ServerProcess start(Path workDir, int port, Path dataDir, String... sets) throws IOException,
            InterruptedException {
        return start(workDir, port, dataDir, List.of(), sets);
    }

    /** As {@link #start(Path, int, Path, String...)}, with {@code jvmOptions} before {@code -jar}. */
    public static ServerProcess start(Path workDir, int port, Path dataDir, List<String> jvmOptions, String... sets)
            throws IOException, InterruptedException {
        ServerProcess server = launch(workDir, port, dataDir, jvmOptions, sets);
        try {
            server.awaitReady();
        } catch (RuntimeException | Error e) {
            server.sigkill();
            throw new IllegalStateException("server did not become ready: " + e.getMessage()
                    + "\n--- command: " + String.join(" ", server.command) + "\n--- log:\n" + server.output(), e);
        }
        return server;
    }

    /** Starts the server without waiting for it: for a start that is meant to fail, or to be cut short. */
    public static ServerProcess launch(Path workDir, int port, Path dataDir, String... sets) throws IOException {
        return launch(workDir, port, dataDir, List.of(), sets);
    }

    /** As {@link #launch(Path, int, Path, String...)}, with {@code jvmOptions} before {@code -jar}. */
    public static ServerProcess launch(Path workDir, int port, Path dataDir, List<String> jvmOptions, String... sets)
            throws IOException {
        String jar = System.getProperty("push.server.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException("system property push.server.jar does not name the built jar: " + jar
                    + " (run through failsafe: mvn verify)");
        }
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-jar", jar, "--host", "127.0.0.1",
                "--port", Integer.toString(port), "--data-dir", dataDir.toString(),
                "--set", "server.ioThreads=2",
                // The warm-ups (live ~4 s, replay 1-3 s of CPU a start) are not what these tests are
                // about; StartupFailureIT turns them on where it tests them. A later --set wins.
                "--set", "fanout.warmup=false", "--set", "store.replayWarmup=false"));
        for (String s : sets) {
            cmd.add("--set");
            cmd.add(s);
        }
        Files.createDirectories(workDir);
        Path log = workDir.resolve("server-" + STARTS.incrementAndGet() + ".log");
        Process p = new ProcessBuilder(cmd)
                .directory(workDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        return new ServerProcess(p, port, dataDir, log, cmd);
    }

    private void awaitReady() throws InterruptedException {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        HttpRequest probe = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz"))
                .timeout(Duration.ofSeconds(1)).GET().build();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("exited with " + process.exitValue() + " before answering");
            }
            try {
                if (PROBE.send(probe, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("no 200 from /readyz within " + READY_TIMEOUT);
    }

    public int port() {
        return port;
    }

    public Path dataDir() {
        return dataDir;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGTERM (on Linux {@link Process#destroy()} sends it): the orderly drain. */
    public void sigterm() {
        process.destroy();
    }

    /** SIGKILL: no shutdown code runs. Waits (bounded) until the process is gone. */
    public void sigkill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** The exit code, or fails when the process is still running after {@code timeout}. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("server still running " + timeout + " after being asked to stop\n--- log:\n"
                    + output());
        }
        return process.exitValue();
    }

    /** Everything the process printed so far. */
    public String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(log " + log + " unreadable: " + e + ")";
        }
    }

    /** Kills the process if it still runs; for {@code @AfterEach}. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            sigkill();
        }
    }
}
