package io.pushd.loadtest.cluster;

import io.pushd.loadtest.Deadline;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The real nginx in front of the nodes, as {@code config/nginx.conf.example} sets it up for a
 * cluster: round robin over every node (no hash, no stickiness), WebSocket upgrade on
 * {@code /v1/live}, unbuffered SSE on {@code /v1/sse}, upstream keep-alive for the REST API, and a
 * refused or draining node (connect error, 502, 503 before anything was sent) skipped for the
 * next one. It runs unprivileged with {@code -p}/{@code -c} on a free loopback port, everything
 * (config, pid, error log, temp paths) in its own directory.
 *
 * <p>Each subscription's connection is logged to {@code connections.log} when it ends, naming
 * the client's address, the node that served it and when: {@link ConnectionLog} reads it to say
 * which node each client left and which it landed on.
 */
final class NginxFront implements AutoCloseable {

    static final String CONNECTION_LOG = "connections.log";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);

    private final Process process;
    private final Path dir;
    private final int port;
    private final Thread killOnExit;

    private NginxFront(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
        // the workers first: once the master is gone they are no longer its descendants
        this.killOnExit = new Thread(() -> {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }, "push-loadtest-kill-nginx");
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    /**
     * Writes the config into {@code dir}, starts nginx in the foreground and waits until it
     * proxies (a {@code GET /v1/topics/{probeTopic}} answered 200 by some node).
     *
     * @param nodePorts   the nodes' loopback ports, in node order
     * @param connections how many subscribers it must carry (each holds two connections in nginx)
     */
    static NginxFront start(Path binary, Path dir, List<Integer> nodePorts, int connections, String probeTopic,
                            Deadline deadline) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        int port = Ports.freeLoopbackPort();
        Files.writeString(dir.resolve("nginx.conf"), config(dir, port, nodePorts, connections), StandardCharsets.UTF_8);
        String d = dir.toAbsolutePath().toString();
        Process p = new ProcessBuilder(binary.toString(), "-p", d + "/", "-c", d + "/nginx.conf", "-e",
                d + "/error.log", "-g", "daemon off;")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("nginx.out").toFile())
                .start();
        NginxFront n = new NginxFront(p, dir, port);
        try {
            n.awaitProxying(probeTopic, deadline);
        } catch (InterruptedException | RuntimeException e) {
            n.close();
            throw e;
        }
        return n;
    }

    /** The whole nginx.conf: a main config around the cluster site, all paths under {@code dir}. */
    static String config(Path dir, int port, List<Integer> nodePorts, int connections) {
        String d = dir.toAbsolutePath().toString();
        // Two connections per subscriber (client side, node side) plus room for the publisher.
        int workerConnections = 2 * connections + 1024;
        String subscribers = nodePorts.stream()
                .map(p -> "        server 127.0.0.1:" + p + " max_fails=0;")
                .collect(Collectors.joining("\n"));
        String api = nodePorts.stream()
                .map(p -> "        server 127.0.0.1:" + p + " max_fails=1 fail_timeout=5s;")
                .collect(Collectors.joining("\n"));
        return ("# Written by push-loadtest (restart --nodes): the cluster variant of config/nginx.conf.example.\n"
                + (isRoot() ? "user root;\n" : "") // else the workers run as nobody: no access to the temp dir
                + "worker_processes 1;\n"
                + "worker_rlimit_nofile " + (workerConnections + 64) + ";\n"
                + "worker_shutdown_timeout 5s;\n"
                + "pid " + d + "/nginx.pid;\n"
                + "error_log " + d + "/error.log warn;\n"
                + "events { worker_connections " + workerConnections + "; }\n"
                + "http {\n"
                + "    client_body_temp_path " + d + "/client_body;\n"
                + "    proxy_temp_path " + d + "/proxy;\n"
                + "    fastcgi_temp_path " + d + "/fastcgi;\n"
                + "    uwsgi_temp_path " + d + "/uwsgi;\n"
                + "    scgi_temp_path " + d + "/scgi;\n"
                + "    access_log off;\n"
                + "    map $http_upgrade $connection_upgrade {\n"
                + "        default upgrade;\n"
                + "        ''      close;\n"
                + "    }\n"
                // One line per subscription when it ends: client, the node(s) tried (the last one
                // served it), status (101 = upgraded), end time and duration, so start = end - duration.
                + "    log_format push_hops '$remote_addr|$upstream_addr|$status|$msec|$request_time|$uri';\n"
                // Round robin, no hash, no stickiness: every node holds every topic's history (Redis).
                // Subscriptions without passive marking: nginx counts a trial request as a success only
                // once it ends, which a WebSocket does minutes later, so a node marked down once would
                // get one subscriber per fail_timeout (see config/nginx.conf.example).
                + "    upstream push_subscribers {\n"
                + subscribers + "\n"
                + "    }\n"
                + "    upstream push_nodes {\n"
                + api + "\n"
                + "        keepalive 32;\n"
                + "        keepalive_timeout 5s;\n"
                + "    }\n"
                + "    server {\n"
                + "        listen 127.0.0.1:" + port + ";\n"
                + "        client_max_body_size 128k;\n"
                + "        proxy_set_header Host              $host;\n"
                + "        proxy_set_header X-Real-IP         $remote_addr;\n"
                + "        proxy_set_header X-Forwarded-For   $proxy_add_x_forwarded_for;\n"
                + "        proxy_connect_timeout 2s;\n"
                // A dead node refuses the connect: try the next one. A POST already sent is not
                // replayed (nginx's default for non-idempotent methods); the publisher retries it
                // with its Idempotency-Key, which gives the same ID on any node.
                + "        proxy_next_upstream error timeout;\n"
                + "        location = /v1/live {\n"
                // A draining node refuses new subscribers with 503 before any upgrade: one more reason to
                // try the next node.
                + "            access_log " + d + "/" + CONNECTION_LOG + " push_hops;\n"
                + "            proxy_next_upstream error timeout http_502 http_503;\n"
                + "            proxy_pass http://push_subscribers;\n"
                + "            proxy_http_version 1.1;\n"
                + "            proxy_set_header Upgrade    $http_upgrade;\n"
                + "            proxy_set_header Connection $connection_upgrade;\n"
                + "            proxy_read_timeout 75s;\n"
                + "            proxy_send_timeout 75s;\n"
                + "            send_timeout 60s;\n"
                + "            proxy_buffering off;\n"
                + "        }\n"
                + "        location = /v1/sse {\n"
                + "            access_log " + d + "/" + CONNECTION_LOG + " push_hops;\n"
                + "            proxy_next_upstream error timeout http_502 http_503;\n"
                + "            proxy_pass http://push_subscribers;\n"
                + "            proxy_http_version 1.1;\n"
                + "            proxy_set_header Connection \"\";\n"
                + "            proxy_buffering off;\n"
                + "            proxy_cache off;\n"
                + "            gzip off;\n"
                + "            proxy_read_timeout 75s;\n"
                + "            proxy_send_timeout 75s;\n"
                + "            send_timeout 60s;\n"
                + "        }\n"
                + "        location / {\n"
                + "            proxy_pass http://push_nodes;\n"
                + "            proxy_http_version 1.1;\n"
                + "            proxy_set_header Connection \"\";\n"
                + "            proxy_read_timeout 15s;\n"
                + "            proxy_send_timeout 15s;\n"
                + "        }\n"
                + "    }\n"
                + "}\n");
    }

    int port() {
        return port;
    }

    Path connectionLog() {
        return dir.resolve(CONNECTION_LOG);
    }

    String describe() {
        return "nginx pid " + process.pid() + " on 127.0.0.1:" + port + " (round robin, config " + dir.resolve("nginx.conf")
                + ")";
    }

    private void awaitProxying(String probeTopic, Deadline deadline) throws InterruptedException {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofMillis(500)).build();
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/topics/" + probeTopic))
                .timeout(Duration.ofSeconds(2)).GET().build();
        long end = System.nanoTime() + deadline.cap(START_TIMEOUT).toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IllegalStateException("nginx exited with " + process.exitValue() + "; see "
                        + dir.resolve("nginx.out") + " and " + dir.resolve("error.log"));
            }
            try {
                if (http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() - end > 0) {
                deadline.check("starting nginx");
                throw new IllegalStateException("nginx did not proxy to the nodes within " + START_TIMEOUT.toSeconds()
                        + " s; see " + dir.resolve("error.log"));
            }
            Thread.sleep(50);
        }
    }

    /** SIGTERM (nginx's fast shutdown), then kill what is left. Never throws. */
    @Override
    public void close() {
        try {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.descendants().forEach(ProcessHandle::destroyForcibly);
                    process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
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

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }
}
