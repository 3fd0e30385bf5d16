package io.pushd.loadtest.cluster;

import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.server.ManagedServer;
import io.pushd.loadtest.server.RestartMode;
import io.pushd.loadtest.server.RestartTiming;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A whole cluster on loopback for one run: a standalone {@code redis-server} (AOF on), N server
 * nodes (the fat jar as child processes, each with {@code cluster.redisUri}, its own data
 * directory and port) and the real nginx in front, round robin. Clients and publishers talk to
 * nginx only ({@link #host()}/{@link #port()}); a restart takes down one node and waits until it
 * is ready again. Everything started is stopped by {@link #close()}, also when starting failed.
 */
public final class ManagedCluster implements AutoCloseable {

    private final Path dir;
    private Path redisData;
    private RedisServer redis;
    private final List<ManagedServer> nodes = new ArrayList<>();
    private NginxFront nginx;
    /** A {@link System#nanoTime()} and the wall clock at the same moment: nginx logs wall-clock times. */
    private final long nanos0 = System.nanoTime();
    private final long wall0 = System.currentTimeMillis();

    private ManagedCluster(Path dir) {
        this.dir = dir;
    }

    /** What to start; binaries already found. */
    public record Spec(Path serverJar, Path redisBinary, Path nginxBinary, int nodes, List<String> nodeSets,
                       int connections, String probeTopic) {
    }

    /**
     * Starts Redis, the nodes one after another (each ready before the next) and nginx.
     *
     * @param dir logs and configs go here: {@code redis/}, {@code node-K/}, {@code nginx/}
     */
    public static ManagedCluster start(Spec spec, Path dir, Deadline deadline) throws IOException, InterruptedException {
        ManagedCluster c = new ManagedCluster(dir.toAbsolutePath());
        try {
            Path redisDir = Files.createDirectories(c.dir.resolve("redis"));
            c.redisData = Files.createTempDirectory("push-loadtest-redis-");
            c.redis = RedisServer.start(spec.redisBinary(), c.redisData, redisDir, deadline);
            List<String> sets = new ArrayList<>(spec.nodeSets());
            sets.add("cluster.redisUri=" + c.redis.uri());
            // nginx is the one proxy: believe its X-Forwarded-For, so per-address limits see the clients.
            sets.add("security.trustedProxies=127.0.0.1");
            for (int k = 1; k <= spec.nodes(); k++) {
                deadline.check("starting node " + k);
                c.nodes.add(ManagedServer.start(spec.serverJar(), null, c.dir.resolve("node-" + k), sets, deadline));
            }
            c.nginx = NginxFront.start(spec.nginxBinary(), c.dir.resolve("nginx"),
                    c.nodes.stream().map(ManagedServer::port).toList(), spec.connections(), spec.probeTopic(), deadline);
        } catch (IOException | InterruptedException | RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** nginx's address: where clients and the publisher go. */
    public String host() {
        return "127.0.0.1";
    }

    public int port() {
        return nginx.port();
    }

    public int size() {
        return nodes.size();
    }

    /** Node {@code k}'s own port (1-based), as nginx's log names it. */
    public int nodePort(int k) {
        return nodes.get(k - 1).port();
    }

    /** The node (1-based) listening on {@code port}, or -1. */
    public int nodeOfPort(int port) {
        for (int k = 1; k <= nodes.size(); k++) {
            if (nodes.get(k - 1).port() == port) {
                return k;
            }
        }
        return -1;
    }

    /** Takes node {@code k} (1-based) down in {@code mode} and returns once it is ready again. */
    public RestartTiming restart(int k, RestartMode mode, Deadline deadline, ManagedServer.BeforeLaunch beforeLaunch)
            throws InterruptedException {
        return nodes.get(k - 1).restart(mode, deadline, beforeLaunch);
    }

    public Path connectionLog() {
        return nginx.connectionLog();
    }

    /** Epoch milliseconds of a {@link System#nanoTime()} value (to compare with nginx's log). */
    public long epochMillis(long nanoTime) {
        return wall0 + Math.floorDiv(nanoTime - nanos0, 1_000_000L);
    }

    /** Lines for the report: Redis, each node, nginx. */
    public List<String> describe() {
        List<String> out = new ArrayList<>();
        out.add(redis.describe());
        for (int k = 1; k <= nodes.size(); k++) {
            out.add("node-" + k + ": " + nodes.get(k - 1).describe());
        }
        out.add(nginx.describe());
        return out;
    }

    /**
     * nginx first (no new connections), then the nodes (in parallel: each drains for a few
     * seconds), then Redis, whose temp directory is deleted. Never throws.
     */
    @Override
    public void close() {
        if (nginx != null) {
            nginx.close();
        }
        List<Thread> stopping = new ArrayList<>();
        for (ManagedServer n : nodes) {
            Thread t = new Thread(n::close, "push-loadtest-stop-node");
            t.start();
            stopping.add(t);
        }
        for (Thread t : stopping) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (redis != null) {
            redis.close();
        }
        if (redisData != null) {
            ManagedServer.deleteRecursively(redisData);
        }
    }
}
