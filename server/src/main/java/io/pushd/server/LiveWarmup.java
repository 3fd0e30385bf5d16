package io.pushd.server;

import io.pushd.server.config.AuthSettings;
import io.pushd.server.config.Cluster;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.store.ScratchDirectory;
import io.pushd.server.tls.TlsConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A short run of the live path at start-up, before the server is ready: publishes over HTTP and their
 * fan-out to WebSocket subscribers, so that the first minutes after a start (the returning herd,
 * the first publishes) run compiled code. Without it a fresh JVM spends a fifth of its CPU in its
 * first ten seconds of fan-out on C2 compiling the publish path (HTTP decoding, JSON, the
 * appender, the pipeline) and runs that path profiled meanwhile, on the one core that also serves
 * the clients: at 100 publishes a second its methods take minutes to reach C2's thresholds.
 *
 * <p>It is the real server, not a copy: a scratch {@link PushServer} of the operator's own
 * configuration (transport, limits, fan-out settings, event-loop count) on an ephemeral loopback
 * port with its own store in {@code <store.dataDir>/live-warmup} (deleted afterwards), driven by
 * plain sockets the way clients drive the daemon: {@link #SUBSCRIBERS} WebSocket subscribers of
 * one topic (a crowded group on each event loop, so the coalesced writes run), {@link #FEW} of
 * another (the direct path), and {@link #PUBLISHERS} keep-alive connections that each publish one
 * event at a time and wait for the answer, as HTTP clients do (pipelined requests take other
 * branches, and code compiled for them was thrown away as soon as real clients came). Warmed on
 * the same classes, the code is the one real traffic runs: HotSpot compiles methods, not
 * instances. Nothing of the daemon's own history, topics, sessions or metrics is touched. Then it
 * waits, at most {@link #SETTLE}, until the JIT has finished what the run queued.
 * {@code fanout.warmup: false} turns it off; a cluster node skips it (its history is Redis).
 */
final class LiveWarmup {

    /** The scratch server's directory under the data directory (emptied before and deleted after). */
    static final String DIRECTORY = "live-warmup";
    static final String TOPIC = "warmup";
    static final String FEW_TOPIC = "warmup-few";
    static final int SUBSCRIBERS = 96;
    static final int FEW = 4;
    static final int PUBLISHERS = 4;
    /** Every eighth to the few; what runs per delivery or per header crosses C2's thresholds many times over. */
    static final int PUBLISHES = 3_000;
    /**
     * Each publisher's gap between publishes: {@link #PUBLISHERS} of them make 1,000 a second, about
     * 100,000 deliveries a second to the crowded topic, the load of a busy server. Not faster: as
     * fast as it could go (2,000 a second on one core), the run kept C2's queue long, where HotSpot
     * compiles with less profiling and raises its thresholds, and the CPU per delivery of the
     * minutes after was worse than with no warm-up at all (session 13, README Performance).
     */
    static final Duration PACE = Duration.ofMillis(4);
    /** A warm-up that takes longer than this is given up (the start goes on). */
    static final Duration TIMEOUT = Duration.ofSeconds(20);
    /** The longest wait for the compiler queue to empty after the run. */
    static final Duration SETTLE = Duration.ofSeconds(3);

    /** What a warm-up did, for the start-up log line. */
    record Result(int published, long deliveredBytes, long millis, long compileMillis) {
    }

    private LiveWarmup() {
    }

    /** Runs the warm-up in {@code dataDir}/{@link #DIRECTORY} with a scratch server made from {@code config}. */
    static Result run(ServerConfig config, Path dataDir) throws InterruptedException {
        return run(config, dataDir.resolve(DIRECTORY), PUBLISHES);
    }

    static Result run(ServerConfig config, Path dir, int publishes) throws InterruptedException {
        long t0 = System.nanoTime();
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long compiled0 = compileMillis(jit);
        ScratchDirectory.delete(dir);
        PushServer scratch = PushServer.startScratch(scratchConfig(config, dir));
        Subscribers subs = null;
        try {
            InetSocketAddress at = new InetSocketAddress(InetAddress.getLoopbackAddress(), scratch.port());
            subs = Subscribers.open(at);
            int published = publish(at, publishes);
            long delivered = subs.stop();
            subs = null;
            scratch.close();
            scratch = null;
            settle(jit, t0);
            return new Result(published, delivered, (System.nanoTime() - t0) / 1_000_000,
                    compileMillis(jit) - compiled0);
        } finally {
            if (subs != null) {
                subs.stop();
            }
            if (scratch != null) {
                scratch.close();
            }
            ScratchDirectory.delete(dir);
        }
    }

    /**
     * The operator's configuration where it shapes the code that runs (transport, event loops,
     * limits, fan-out, heartbeats, drain), on loopback and plain HTTP, with its own data and no
     * access control, start-up ramp, admin port, demo page or warm-ups of its own.
     */
    static ServerConfig scratchConfig(ServerConfig config, Path dir) {
        ServerConfig.Server s = config.server();
        return config
                .withServer(new ServerConfig.Server("127.0.0.1", 0, s.ioThreads(), false, "", null, s.transport(), 0))
                .withStore(config.store().toBuilder().dataDir(dir.toString()).replayWarmup(false).build())
                .withFanout(config.fanout().withWarmup(false))
                .withReconnect(new ServerConfig.Reconnect(config.reconnect().targetRate(), false))
                .withSecurity(ServerConfig.Security.defaults())
                .withAuth(AuthSettings.defaults())
                .withTls(TlsConfig.defaults())
                .withCluster(Cluster.defaults());
    }

    /** {@code publishes} events, one at a time on each of {@link #PUBLISHERS} kept-alive connections. */
    private static int publish(InetSocketAddress at, int publishes) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger ok = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        List<RuntimeException> failures = new ArrayList<>();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        for (int p = 0; p < PUBLISHERS; p++) {
            Thread t = new Thread(() -> {
                try (Http http = new Http(at)) {
                    long due = System.nanoTime();
                    for (int i = next.getAndIncrement(); i < publishes && System.nanoTime() < deadline;
                         i = next.getAndIncrement()) {
                        due += PACE.toNanos();
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            java.util.concurrent.locks.LockSupport.parkNanos(wait);
                        }
                        String topic = i % 8 == 7 ? FEW_TOPIC : TOPIC;
                        if (http.post("/v1/topics/" + topic + "/events",
                                "{\"ts\":" + System.currentTimeMillis() + ",\"n\":" + i + ",\"text\":\""
                                        + "warm-up event of the live path, about a hundred bytes long\"}")) {
                            ok.incrementAndGet();
                        }
                    }
                } catch (IOException e) {
                    synchronized (failures) {
                        failures.add(new UncheckedIOException("live warm-up: publishing over loopback failed", e));
                    }
                }
            }, "push-live-warmup-publisher-" + p);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000 + 1_000));
        }
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
        if (ok.get() == 0) {
            throw new IllegalStateException("live warm-up: no publish was accepted");
        }
        return ok.get();
    }

    /** Waits until the JIT's total compile time stops growing (its queue has emptied), at most {@link #SETTLE}. */
    private static void settle(CompilationMXBean jit, long t0) throws InterruptedException {
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return;
        }
        long until = System.nanoTime() + SETTLE.toNanos();
        long last = jit.getTotalCompilationTime();
        int quiet = 0;
        while (quiet < 3 && System.nanoTime() < until) {
            Thread.sleep(100);
            long now = jit.getTotalCompilationTime();
            quiet = now - last <= 2 ? quiet + 1 : 0;
            last = now;
        }
    }

    private static long compileMillis(CompilationMXBean jit) {
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }

    /** One kept-alive HTTP/1.1 connection that sends a request and reads its whole answer. */
    private static final class Http implements AutoCloseable {
        private final InetSocketAddress at;
        private final ByteBuffer in = ByteBuffer.allocate(16 * 1024);
        private SocketChannel ch;

        Http(InetSocketAddress at) throws IOException {
            this.at = at;
            this.ch = SocketChannel.open(at);
        }

        /** True when the answer is 2xx; reconnects when the server closed the connection after it. */
        boolean post(String path, String json) throws IOException {
            byte[] body = json.getBytes(StandardCharsets.UTF_8);
            String head = "POST " + path + " HTTP/1.1\r\nhost: 127.0.0.1:" + at.getPort()
                    + "\r\nconnection: keep-alive\r\ncontent-type: application/json\r\naccept: */*\r\n"
                    + "accept-encoding: gzip, deflate\r\nuser-agent: push-live-warmup\r\ncontent-length: "
                    + body.length + "\r\n\r\n";
            byte[] h = head.getBytes(StandardCharsets.US_ASCII);
            ByteBuffer out = ByteBuffer.allocate(h.length + body.length).put(h).put(body).flip();
            while (out.hasRemaining()) {
                ch.write(out);
            }
            in.clear();
            int headEnd;
            while ((headEnd = headEnd(in)) < 0) {
                read();
            }
            String header = new String(in.array(), 0, headEnd, StandardCharsets.US_ASCII).toLowerCase();
            int status = Integer.parseInt(header.substring(9, 12));
            int length = contentLength(header);
            while (in.position() < headEnd + 4 + length) {
                read();
            }
            if (header.contains("\r\nconnection: close")) {
                ch.close();
                ch = SocketChannel.open(at);
            }
            return status >= 200 && status < 300;
        }

        private void read() throws IOException {
            if (!in.hasRemaining() || ch.read(in) < 0) {
                throw new IOException("the scratch server closed the connection or answered more than "
                        + in.capacity() + " bytes");
            }
        }

        private static int headEnd(ByteBuffer b) {
            byte[] a = b.array();
            for (int i = 3; i < b.position(); i++) {
                if (a[i - 3] == '\r' && a[i - 2] == '\n' && a[i - 1] == '\r' && a[i] == '\n') {
                    return i - 3;
                }
            }
            return -1;
        }

        private static int contentLength(String header) {
            int at = header.indexOf("\r\ncontent-length:");
            if (at < 0) {
                return 0;
            }
            int end = header.indexOf('\r', at + 2);
            return Integer.parseInt(header.substring(at + 17, end < 0 ? header.length() : end).trim());
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }

    /** The subscribers: upgraded over plain sockets, then read and dropped by one thread. */
    private static final class Subscribers {
        private final List<SocketChannel> channels;
        private final Selector selector;
        private final Thread reader;
        private volatile boolean stopping;
        private long bytes;

        private Subscribers(List<SocketChannel> channels, Selector selector) {
            this.channels = channels;
            this.selector = selector;
            this.reader = new Thread(this::drain, "push-live-warmup-reader");
            this.reader.setDaemon(true);
        }

        static Subscribers open(InetSocketAddress at) {
            List<SocketChannel> channels = new ArrayList<>();
            Selector selector = null;
            try {
                selector = Selector.open();
                for (int i = 0; i < SUBSCRIBERS + FEW; i++) {
                    SocketChannel ch = SocketChannel.open(at);
                    channels.add(ch);
                    upgrade(ch, at, i < SUBSCRIBERS ? TOPIC : FEW_TOPIC, i);
                    ch.configureBlocking(false);
                    ch.register(selector, SelectionKey.OP_READ);
                }
                Subscribers s = new Subscribers(channels, selector);
                s.reader.start();
                return s;
            } catch (IOException e) {
                for (SocketChannel ch : channels) {
                    closeQuietly(ch);
                }
                if (selector != null) {
                    closeQuietly(selector);
                }
                throw new UncheckedIOException("live warm-up: cannot subscribe over loopback", e);
            }
        }

        /** The handshake a browser or Node's {@code ws} sends; the answer must be 101. */
        private static void upgrade(SocketChannel ch, InetSocketAddress at, String topic, int i) throws IOException {
            String key = java.util.Base64.getEncoder().encodeToString(
                    String.format("live-warmup-%04d", i).getBytes(StandardCharsets.US_ASCII));
            String req = "GET /v1/live?topic=" + topic + "&after= HTTP/1.1\r\nHost: 127.0.0.1:" + at.getPort()
                    + "\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                    + "Sec-WebSocket-Key: " + key + "\r\n"
                    + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n";
            ByteBuffer out = ByteBuffer.wrap(req.getBytes(StandardCharsets.US_ASCII));
            while (out.hasRemaining()) {
                ch.write(out);
            }
            ByteBuffer in = ByteBuffer.allocate(4096);
            while (Http.headEnd(in) < 0) {
                if (!in.hasRemaining() || ch.read(in) < 0) {
                    throw new IOException("the scratch server closed the handshake");
                }
            }
            String status = new String(in.array(), 0, Math.min(12, in.position()), StandardCharsets.US_ASCII);
            if (!status.startsWith("HTTP/1.1 101")) {
                throw new IOException("the scratch server refused the handshake: " + status);
            }
        }

        private void drain() {
            ByteBuffer buf = ByteBuffer.allocateDirect(256 * 1024);
            try {
                while (!stopping) {
                    if (selector.select(50) == 0) {
                        continue;
                    }
                    for (SelectionKey k : selector.selectedKeys()) {
                        int n;
                        while ((n = ((SocketChannel) k.channel()).read(buf.clear())) > 0) {
                            bytes += n;
                        }
                        if (n < 0) {
                            k.cancel();
                        }
                    }
                    selector.selectedKeys().clear();
                }
            } catch (IOException e) {
                // the warm-up is over, or its server went away: what was read is what it did
            }
        }

        /** Stops reading, closes every subscriber; the bytes the subscribers received. */
        long stop() throws InterruptedException {
            stopping = true;
            reader.join(TIMEOUT.toMillis());
            for (SocketChannel ch : channels) {
                closeQuietly(ch);
            }
            closeQuietly(selector);
            return bytes;
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing a scratch socket: nothing to do about it
        }
    }
}
