package io.pushd.loadtest.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Fills the store fast: plain sockets, each sending HTTP/1.1 publishes in pipelined batches and
 * counting the 201s. A general HTTP client spends more CPU per request than the server does, so
 * on a small machine it, not the server, would set the pace of a million-event fill.
 */
final class PipelinedFiller {

    private static final int DEPTH = 64;

    private final String host;
    private final int port;
    private final List<String> topics;
    private final int connections;
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();

    PipelinedFiller(String host, int port, List<String> topics, int connections) {
        this.host = host;
        this.port = port;
        this.topics = topics;
        this.connections = connections;
    }

    long acked() {
        return acked.get();
    }

    long failed() {
        return failed.get();
    }

    String firstFailure() {
        return firstFailure.get();
    }

    /** Publishes {@code n} events (split over the connections) and returns when all are answered. */
    void fill(long n, long deadlineNanos) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        AtomicLong next = new AtomicLong();
        for (int c = 0; c < connections; c++) {
            Thread t = new Thread(() -> run(n, next, deadlineNanos), "fill-" + c);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    private void run(long n, AtomicLong next, long deadlineNanos) {
        byte[] body = "{\"fill\":true,\"pad\":\"0123456789abcdef0123456789abcdef\"}".getBytes(StandardCharsets.UTF_8);
        try (Socket s = new Socket(host, port)) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            InputStream in = new BufferedInputStream(s.getInputStream(), 64 * 1024);
            while (System.nanoTime() < deadlineNanos) {
                long first = next.getAndAdd(DEPTH);
                if (first >= n) {
                    return;
                }
                int batch = (int) Math.min(DEPTH, n - first);
                StringBuilder req = new StringBuilder(batch * 200);
                for (int i = 0; i < batch; i++) {
                    String topic = topics.get((int) ((first + i) % topics.size()));
                    req.append("POST /v1/topics/").append(topic).append("/events HTTP/1.1\r\nHost: ").append(host)
                            .append("\r\nContent-Type: application/json\r\nContent-Length: ").append(body.length)
                            .append("\r\n\r\n").append(new String(body, StandardCharsets.UTF_8));
                }
                out.write(req.toString().getBytes(StandardCharsets.UTF_8));
                out.flush();
                for (int i = 0; i < batch; i++) {
                    int status = readResponse(in);
                    if (status == 201) {
                        acked.incrementAndGet();
                    } else {
                        failed.incrementAndGet();
                        firstFailure.compareAndSet(null, "HTTP " + status);
                    }
                }
            }
        } catch (IOException e) {
            failed.incrementAndGet();
            firstFailure.compareAndSet(null, e.toString());
        }
    }

    /** Reads one response, returns its status; the body is skipped by Content-Length. */
    private static int readResponse(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int status = -1;
        int length = 0;
        while (true) {
            line.setLength(0);
            int b;
            while ((b = in.read()) != '\n') {
                if (b < 0) {
                    throw new IOException("connection closed mid-response");
                }
                if (b != '\r') {
                    line.append((char) b);
                }
            }
            if (line.length() == 0) {
                break;
            }
            String l = line.toString();
            if (status < 0) {
                status = Integer.parseInt(l.substring(9, 12));
            } else if (l.regionMatches(true, 0, "content-length:", 0, 15)) {
                length = Integer.parseInt(l.substring(15).trim());
            }
        }
        in.skipNBytes(length);
        return status;
    }
}
