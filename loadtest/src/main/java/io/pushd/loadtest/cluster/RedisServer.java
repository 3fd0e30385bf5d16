package io.pushd.loadtest.cluster;

import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.server.ManagedServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A standalone {@code redis-server} as a child process: loopback, a free port, its files (the
 * AOF) in a temp directory, {@code appendonly yes} with the default {@code appendfsync everysec}
 * and no RDB snapshots; what the README recommends for cluster mode.
 */
final class RedisServer implements AutoCloseable {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(15);

    private final Process process;
    private final int port;
    private final Path dir;
    private final Thread killOnExit;

    private RedisServer(Process process, int port, Path dir) {
        this.process = process;
        this.port = port;
        this.dir = dir;
        // Ctrl-C or SIGTERM of the load test: Redis goes, and its data directory with it
        this.killOnExit = new Thread(() -> {
            process.destroyForcibly();
            try {
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ManagedServer.deleteRecursively(dir);
        }, "push-loadtest-kill-redis");
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    /** Starts it in {@code dir} (its log in {@code logDir}) and waits until it answers PING. */
    static RedisServer start(Path binary, Path dir, Path logDir, Deadline deadline)
            throws IOException, InterruptedException {
        int port = Ports.freeLoopbackPort();
        Files.createDirectories(dir);
        Path log = logDir.resolve("redis.log");
        // maxmemory-policy noeviction: an evicted key would be history lost (the README's advice).
        Process p = new ProcessBuilder(binary.toString(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--dir", dir.toString(), "--appendonly", "yes", "--save", "", "--maxmemory-policy", "noeviction",
                "--daemonize", "no")
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        RedisServer r = new RedisServer(p, port, dir);
        long end = System.nanoTime() + deadline.cap(START_TIMEOUT).toNanos();
        while (!r.ping()) {
            if (!p.isAlive() || System.nanoTime() - end > 0) {
                r.close();
                deadline.check("starting redis-server");
                throw new IllegalStateException("redis-server did not answer PING on 127.0.0.1:" + port + " within "
                        + START_TIMEOUT.toSeconds() + " s; see " + log);
            }
            Thread.sleep(20);
        }
        return r;
    }

    String uri() {
        return "redis://127.0.0.1:" + port;
    }

    String describe() {
        return "redis-server pid " + process.pid() + " on 127.0.0.1:" + port + " (appendonly yes, dir " + dir + ")";
    }

    /** RESP by hand: the readiness check must not lean on the client the server under test uses. */
    private boolean ping() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            s.setSoTimeout(500);
            OutputStream out = s.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = in.readNBytes(7);
            return new String(buf, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    /** SIGTERM (Redis flushes the AOF), SIGKILL if it does not stop in 10 s. Never throws. */
    @Override
    public void close() {
        try {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
    }
}
