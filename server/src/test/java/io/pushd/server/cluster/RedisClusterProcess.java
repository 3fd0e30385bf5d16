package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A real Redis Cluster of three masters (no replicas) for a test: three {@code redis-server}
 * processes with {@code --cluster-enabled yes} on ephemeral ports (and ephemeral bus ports:
 * port + 10000 may not be free or may not exist), joined by {@code redis-cli --cluster create}.
 * Skipped or failed like {@link RedisProcess} when the binary is missing ({@code PUSH_REQUIRE_REDIS}).
 */
final class RedisClusterProcess implements AutoCloseable {

    private static final int MASTERS = 3;

    private final Path dir;
    private final int replicas;
    private final int[] ports;
    private final int[] busPorts;
    private final Process[] processes;

    private RedisClusterProcess(Path dir, int replicas) {
        this.dir = dir;
        this.replicas = replicas;
        int nodes = MASTERS * (1 + replicas);
        ports = new int[nodes];
        busPorts = new int[nodes];
        processes = new Process[nodes];
    }

    /** Starts three masters, creates the cluster and waits until every node says cluster_state:ok. */
    static RedisClusterProcess start(Path dir) throws Exception {
        return start(dir, 0);
    }

    /**
     * As {@link #start(Path)}, with {@code replicas} replicas per master ({@code DEBUG} allowed
     * on every node, so a test can make a replica lag with {@code DEBUG SLEEP}).
     */
    static RedisClusterProcess start(Path dir, int replicas) throws Exception {
        RedisProcess.requireBinary();
        RedisClusterProcess c = new RedisClusterProcess(dir, replicas);
        try {
            for (int i = 0; i < c.ports.length; i++) {
                for (int attempt = 1; ; attempt++) {
                    c.ports[i] = freePort();
                    c.busPorts[i] = freePort();
                    if (c.startNode(i)) {
                        break;
                    }
                    if (attempt == RedisProcess.START_ATTEMPTS) {
                        fail("a cluster node found its ports taken " + attempt + " times in a row; see " + dir);
                    }
                }
            }
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            for (int p : c.ports) {
                create.add("127.0.0.1:" + p);
            }
            create.addAll(List.of("--cluster-replicas", Integer.toString(replicas), "--cluster-yes"));
            run(create);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!c.allOk() || !c.replicasInSync()) {
                if (System.nanoTime() > deadline) {
                    fail("the Redis Cluster did not reach cluster_state:ok; see " + dir);
                }
                Thread.sleep(100);
            }
        } catch (Exception | AssertionError e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** The port of the (first) replica of the master on {@code masterPort}. */
    int replicaOf(int masterPort) throws Exception {
        String masterId = null;
        String[] lines = cli(ports[0], "CLUSTER", "NODES").split("\n");
        for (String line : lines) {
            String[] f = line.trim().split(" ");
            if (f.length > 2 && f[1].startsWith("127.0.0.1:" + masterPort + "@")) {
                masterId = f[0];
            }
        }
        for (String line : lines) {
            String[] f = line.trim().split(" ");
            if (f.length > 3 && f[2].contains("slave") && f[3].equals(masterId)) {
                return Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
            }
        }
        return fail("no replica of " + masterPort);
    }

    private boolean replicasInSync() throws Exception {
        if (replicas == 0) {
            return true;
        }
        for (int p : ports) {
            String info = cli(p, "INFO", "replication");
            if (info.contains("role:slave") && !info.contains("master_link_status:up")) {
                return false;
            }
        }
        return cli(ports[0], "CLUSTER", "NODES").lines().filter(l -> l.contains("slave")).count() == (long) MASTERS * replicas;
    }

    /** {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3}: the daemon's seed syntax. */
    String uri() {
        return "redis-cluster://" + java.util.Arrays.stream(ports).limit(MASTERS).mapToObj(p -> "127.0.0.1:" + p)
                .collect(Collectors.joining(","));
    }

    int[] ports() {
        return ports.clone();
    }

    /**
     * One topic name per master, chosen by asking Redis ({@code CLUSTER KEYSLOT}) where the
     * topic's hash tag lands and ({@code CLUSTER NODES}) which master serves that slot.
     * Returns master port → topic.
     */
    Map<Integer, String> topicOnEachMaster(String prefix) throws Exception {
        Map<Integer, int[]> ranges = slotRanges();
        Map<Integer, String> chosen = new LinkedHashMap<>();
        for (int i = 0; chosen.size() < MASTERS && i < 200; i++) {
            String topic = prefix + i;
            int slot = slot(topic);
            for (Map.Entry<Integer, int[]> r : ranges.entrySet()) {
                if (slot >= r.getValue()[0] && slot <= r.getValue()[1]) {
                    chosen.putIfAbsent(r.getKey(), topic);
                }
            }
        }
        if (chosen.size() < MASTERS) {
            fail("no topic name found for every master: " + chosen);
        }
        return chosen;
    }

    /** Another topic served by {@code port}'s master, in another slot than {@code other}'s. */
    String anotherTopicOn(int port, String other, String prefix) throws Exception {
        int[] range = slotRanges().get(port);
        int otherSlot = slot(other);
        for (int i = 0; i < 500; i++) {
            int s = slot(prefix + i);
            if (s >= range[0] && s <= range[1] && s != otherSlot) {
                return prefix + i;
            }
        }
        return fail("no second topic found on " + port);
    }

    private int slot(String topic) throws Exception {
        return Integer.parseInt(cli(ports[0], "CLUSTER", "KEYSLOT", "push:{" + topic + "}:m").trim());
    }

    /** Master port → its one slot range (what {@code --cluster create} gives three empty masters). */
    private Map<Integer, int[]> slotRanges() throws Exception {
        Map<Integer, int[]> ranges = new LinkedHashMap<>();
        for (String line : cli(ports[0], "CLUSTER", "NODES").split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length < 9 || !f[2].contains("master")) {
                continue;
            }
            int port = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
            String[] range = f[8].split("-");
            ranges.put(port, new int[] {Integer.parseInt(range[0]), Integer.parseInt(range[range.length - 1])});
        }
        return ranges;
    }

    /** Stops one master gracefully and starts it again on the same ports with its nodes.conf. */
    void restart(int port, long downMillis) throws Exception {
        int i = indexOf(port);
        stop(i);
        Thread.sleep(downMillis);
        if (!startNode(i)) {
            fail("cluster node " + port + " could not bind its ports again (taken meanwhile); see " + dir);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!allOk()) {
            if (System.nanoTime() > deadline) {
                fail("the Redis Cluster did not return to cluster_state:ok after restarting " + port);
            }
            Thread.sleep(100);
        }
    }

    /** {@code redis-cli -p port args...}, an independent client. */
    String cli(int port, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
        command.addAll(List.of(args));
        return run(command);
    }

    private int indexOf(int port) {
        for (int i = 0; i < ports.length; i++) {
            if (ports[i] == port) {
                return i;
            }
        }
        throw new IllegalArgumentException("not a node of this cluster: " + port);
    }

    /** True once node {@code i} answers on its port; false when it exited because a port was taken. */
    private boolean startNode(int i) throws Exception {
        Path node = Files.createDirectories(dir.resolve("redis-node-" + i));
        processes[i] = new ProcessBuilder("redis-server", "--port", Integer.toString(ports[i]),
                "--cluster-port", Integer.toString(busPorts[i]), "--bind", "127.0.0.1",
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
                "--save", "", "--appendonly", "yes", "--dir", node.toString(),
                "--enable-debug-command", replicas > 0 ? "yes" : "no")
                .redirectErrorStream(true)
                .redirectOutput(node.resolve("redis.log").toFile())
                .start();
        if (!RedisProcess.awaitOwnStart(processes[i], node.resolve("redis.log"))) {
            return false;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (answers(ports[i])) {
                return true;
            }
            Thread.sleep(20);
        }
        return fail("redis-server (cluster node) did not answer on port " + ports[i] + "; see " + node.resolve("redis.log"));
    }

    private boolean answers(int port) {
        try {
            return run(List.of("redis-cli", "-p", Integer.toString(port), "PING")).trim().equals("PONG");
        } catch (Exception | AssertionError e) {
            return false;
        }
    }

    private boolean allOk() throws Exception {
        for (int p : ports) {
            if (!cli(p, "CLUSTER", "INFO").contains("cluster_state:ok")) {
                return false;
            }
        }
        return true;
    }

    private static String run(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) {
            fail(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }

    private void stop(int i) throws InterruptedException {
        Process p = processes[i];
        if (p != null && p.isAlive()) {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws InterruptedException {
        for (int i = 0; i < ports.length; i++) {
            stop(i);
        }
    }
}
