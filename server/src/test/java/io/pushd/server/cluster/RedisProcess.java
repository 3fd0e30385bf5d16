package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A real {@code redis-server} for a test, on an ephemeral port with its files in a temp folder.
 * When the binary is missing the test is skipped with a message, unless {@code -DPUSH_REQUIRE_REDIS=true}
 * (CI), which turns that into a failure.
 */
final class RedisProcess implements AutoCloseable {

    /** Fresh ports a start tries before it gives up (see {@link #awaitOwnStart}). */
    static final int START_ATTEMPTS = 5;

    private final Path dir;
    private int port;
    private Process process;
    private List<String> extraArgs = List.of();

    private RedisProcess(Path dir, int port) {
        this.dir = dir;
        this.port = port;
    }

    /** Starts Redis with AOF on ({@code appendfsync everysec}, the default). */
    static RedisProcess start(Path dir) throws Exception {
        requireBinary();
        RedisProcess r = new RedisProcess(dir, freePort());
        r.startOnFreePort(true);
        return r;
    }

    /** Starts Redis (no AOF) with extra {@code redis-server} arguments, e.g. {@code --requirepass}. */
    static RedisProcess start(Path dir, String... args) throws Exception {
        requireBinary();
        RedisProcess r = new RedisProcess(dir, freePort());
        r.extraArgs = List.of(args);
        r.startOnFreePort(false);
        return r;
    }

    /** Starts on {@link #port}, or on another free port while the one found free was taken meanwhile. */
    private void startOnFreePort(boolean aof) throws Exception {
        for (int attempt = 1; !startProcess(aof, dir); attempt++) {
            if (attempt == START_ATTEMPTS) {
                fail("redis-server found its port taken " + attempt + " times in a row; see " + dir);
            }
            port = freePort();
        }
    }

    static void requireBinary() {
        String path = System.getenv().getOrDefault("PATH", "") + java.io.File.pathSeparator + "/usr/bin:/usr/local/bin";
        boolean present = java.util.Arrays.stream(path.split(java.io.File.pathSeparator))
                .anyMatch(d -> !d.isEmpty() && Files.isExecutable(Path.of(d, "redis-server")));
        if (!present) {
            if ("true".equals(System.getProperty("PUSH_REQUIRE_REDIS", System.getenv("PUSH_REQUIRE_REDIS")))) {
                fail("redis-server is not installed and -DPUSH_REQUIRE_REDIS=true: install Debian's redis-server");
            }
            Assumptions.abort("redis-server is not installed: the cluster tests are skipped "
                    + "(apt-get install redis-server; -DPUSH_REQUIRE_REDIS=true makes this a failure)");
        }
    }

    String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** Stops Redis gracefully (SIGTERM: the AOF is flushed) and starts it again on the same port. */
    void restart(long downMillis) throws Exception {
        stop();
        Thread.sleep(downMillis);
        startOnSamePort(true, dir);
    }

    /** Stops Redis and starts it with nothing: no AOF, an empty folder (a restart without persistence). */
    void restartEmpty() throws Exception {
        stop();
        Path empty = dir.resolve("empty-" + System.nanoTime());
        Files.createDirectories(empty);
        startOnSamePort(false, empty);
    }

    void stop() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    /** A restart: the clients under test know this port, so a port taken meanwhile is a failure. */
    private void startOnSamePort(boolean aof, Path in) throws Exception {
        if (!startProcess(aof, in)) {
            fail("redis-server could not bind its port " + port + " again (taken meanwhile); see " + in);
        }
    }

    /** True once this start answers on {@link #port}; false when it exited because the port was taken. */
    private boolean startProcess(boolean aof, Path in) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("redis-server", "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", aof ? "yes" : "no", "--dir", in.toString()));
        command.addAll(extraArgs);
        Path log = in.resolve("redis-" + port + ".log");
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!awaitOwnStart(process, log)) {
            return false;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (ping()) {
                return true;
            }
            Thread.sleep(20);
        }
        return fail("redis-server did not answer PING on port " + port + "; see " + log);
    }

    /**
     * Waits until the {@code redis-server} just started as {@code process} says in its own
     * {@code log} that it accepts connections: true; false when it exited first because its port
     * was taken. A port found free a moment before can be taken meanwhile (another test fork's
     * Redis, an outgoing connection's ephemeral port), and then a PING alone is answered by
     * whoever holds it: a cluster test was once joining another fork's plain Redis.
     */
    static boolean awaitOwnStart(Process process, Path log) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            String said = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
            if (said.contains("Ready to accept connections")) {
                return true;
            }
            if (!process.isAlive()) {
                if (said.contains("Address already in use")) {
                    return false;
                }
                return fail("redis-server exited (" + process.exitValue() + ") before it was ready; see " + log);
            }
            Thread.sleep(20);
        }
        return fail("redis-server did not say it was ready within 10 s; see " + log);
    }

    /** RESP by hand: one PING, one +PONG (the test does not lean on the client under test). */
    private boolean ping() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            s.setSoTimeout(500);
            OutputStream out = s.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[7];
            int n = in.readNBytes(buf, 0, 7);
            String answer = new String(buf, 0, n, StandardCharsets.US_ASCII);
            return answer.startsWith("+PONG") || answer.startsWith("-NOAUTH"); // up, with --requirepass
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Runs {@code redis-cli -p <port> args...} and returns its output (an independent client). */
    String cli(String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            fail("redis-cli " + args[0] + " failed: " + out);
        }
        return out;
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
