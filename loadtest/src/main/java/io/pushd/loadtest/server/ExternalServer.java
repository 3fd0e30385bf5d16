package io.pushd.loadtest.server;

import io.pushd.loadtest.Deadline;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A server this run did not start ({@code --url}). A restart runs {@code --restart-command} with
 * {@code sh -c}; the command sees {@code PUSH_RESTART_MODE=graceful|crash} and should return once
 * the server was stopped and started again (e.g. {@code systemctl restart push}); then
 * {@code /readyz} is polled.
 */
public final class ExternalServer implements ServerControl {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

    private final URI base;
    private final String restartCommand;
    private final Path logDir;
    private int restarts;

    ExternalServer(URI base, String restartCommand, Path logDir) {
        this.base = base;
        this.restartCommand = restartCommand;
        this.logDir = logDir;
    }

    /** Checks that the server is ready now. */
    void awaitReady(Deadline deadline) throws InterruptedException {
        Probe.awaitReady(base, Duration.ofSeconds(10), deadline, () -> true, "server at " + base);
    }

    @Override
    public String host() {
        return base.getHost();
    }

    @Override
    public int port() {
        return base.getPort();
    }

    @Override
    public URI httpBase() {
        return base;
    }

    @Override
    public String describe() {
        return "external server " + base + " (restart command: " + restartCommand + ")";
    }

    @Override
    public RestartTiming restart(RestartMode mode, Deadline deadline) throws InterruptedException {
        if (restartCommand == null) {
            throw new IllegalStateException("--restart-command is required to restart an external server");
        }
        restarts++;
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", restartCommand)
                .redirectErrorStream(true)
                .redirectOutput(logDir.resolve("restart-command-" + restarts + ".log").toFile());
        pb.environment().put("PUSH_RESTART_MODE", mode.label());
        long triggered = System.nanoTime();
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new IllegalStateException("could not run --restart-command: " + e.getMessage(), e);
        }
        if (!p.waitFor(deadline.cap(COMMAND_TIMEOUT).toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            deadline.check("running --restart-command");
            throw new IllegalStateException("--restart-command still running after " + COMMAND_TIMEOUT.toSeconds() + " s");
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException("--restart-command exited with " + p.exitValue());
        }
        long ready = Probe.awaitReady(base, READY_TIMEOUT, deadline, () -> true, "server at " + base);
        return new RestartTiming(mode, triggered, -1, ready, -1);
    }

    @Override
    public void close() {
        // not ours to stop
    }
}
