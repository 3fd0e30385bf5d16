package io.pushd.client.testing;

import io.pushd.server.PushServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real server for the SSE client tests: in this JVM (the server module this client is built
 * with), or, with {@code -Dpush.sse.server.jar=PATH}, that fat jar as a child process (so the
 * client can be tested against a server branch that has {@code /v1/sse} before it is merged).
 * {@link #crash()} is a {@code kill -9} for the jar, {@link PushServer#close()} in this JVM.
 */
public final class SseTestServer implements AutoCloseable {

    /** The system property naming a server fat jar to run as a child process instead. */
    public static final String JAR_PROPERTY = "push.sse.server.jar";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final Path dataDir;
    private final String jar = System.getProperty(JAR_PROPERTY);
    private int port;
    private PushServer inProcess;
    private Process child;

    private SseTestServer(Path dataDir) {
        this.dataDir = dataDir;
    }

    public static SseTestServer start(Path dataDir) throws Exception {
        SseTestServer s = new SseTestServer(dataDir);
        s.startAgain();
        return s;
    }

    public int port() {
        return port;
    }

    /** Where the server came from, for messages. */
    public String describe() {
        return jar != null ? "fat jar " + jar : "the in-process server";
    }

    /** Starts it again on the same port with the same data (the same epoch). */
    public void startAgain() throws Exception {
        if (jar == null) {
            inProcess = port == 0 ? TestServers.start(dataDir) : TestServers.start(dataDir, port);
            port = inProcess.port();
            return;
        }
        if (port == 0) {
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        child = new ProcessBuilder(List.of(java, "-jar", jar, "--host", "127.0.0.1", "--port", Integer.toString(port),
                "--data-dir", dataDir.toString(), "--set", "drain.lbGrace=0s"))
                .directory(dataDir.getParent().toFile())
                .redirectErrorStream(true)
                .redirectOutput(dataDir.getParent().resolve("server.log").toFile())
                .start();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end && child.isAlive()) {
            if (status("/readyz") == 200) {
                return;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException(describe() + " not ready on port " + port);
    }

    /** Drains (1012 with retry hints, spread over drain.minWindow) and stops. */
    public void drain() throws InterruptedException {
        if (inProcess != null) {
            inProcess.drain();
            inProcess.close();
        } else {
            child.destroy(); // SIGTERM: the drain
            child.waitFor(40, TimeUnit.SECONDS);
        }
    }

    /** Gone at once: no close event, no terminal chunk. */
    public void crash() throws InterruptedException {
        if (inProcess != null) {
            inProcess.close();
        } else {
            child.destroyForcibly(); // SIGKILL
            child.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Whether {@code GET /v1/sse} exists (404 before the server has the SSE transport). */
    public boolean servesSse() throws Exception {
        return status("/v1/sse?topic=probe") != 404;
    }

    /** The status of a GET; the body is not read (an event stream never ends), -1 when nothing answers. */
    private int status(String path) throws InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(2)).GET().build();
        try {
            HttpResponse<InputStream> r = HTTP.send(req, HttpResponse.BodyHandlers.ofInputStream());
            r.body().close();
            return r.statusCode();
        } catch (IOException e) {
            return -1;
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (inProcess != null) {
            inProcess.close();
        }
        if (child != null && child.isAlive()) {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
