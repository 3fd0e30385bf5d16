package io.pushd.server.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.ProtocolCodec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server-sent-events stream over a raw socket: sends {@code GET /v1/sse?query} with the given
 * headers, reads the head, then decodes the chunked body on a thread of its own. Each HTTP chunk
 * must hold whole SSE messages (the server writes each message in one chunk), which
 * {@link #splitMessages} counts; {@link #ended} completes with true on the terminal chunk and
 * false when the connection closed without one.
 */
public final class SseStream implements AutoCloseable {

    /** One SSE message (or a comment): the fields as the spec's parser sees them. */
    public record Message(String event, String id, String data, Long retry, String comment) {
        public JsonNode json() {
            try {
                return ProtocolCodec.mapper().readTree(data);
            } catch (IOException e) {
                throw new AssertionError("data is not JSON: " + data, e);
            }
        }
    }

    public final int status;
    public final Map<String, String> headers;
    public final BlockingQueue<Message> messages = new LinkedBlockingQueue<>();
    public final CompletableFuture<Boolean> ended = new CompletableFuture<>();
    public volatile int splitMessages;
    /** Chunks of the body read so far (a chunked body). */
    public volatile int chunks;
    private final Socket socket;
    private final InputStream in;
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

    /** Opened when the body may be read ({@link #openPaused} holds it until {@link #resume}). */
    private final java.util.concurrent.CountDownLatch reading = new java.util.concurrent.CountDownLatch(1);

    private SseStream(Socket socket, int status, Map<String, String> headers, InputStream in) {
        this.socket = socket;
        this.status = status;
        this.headers = headers;
        this.in = in;
    }

    public static SseStream open(int port, String query, String... headerLines) throws IOException {
        StringBuilder req = new StringBuilder("GET /v1/sse?" + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Accept: text/event-stream\r\n");
        for (String h : headerLines) {
            req.append(h).append("\r\n");
        }
        return send(port, req.append("\r\n").toString());
    }

    /**
     * As {@link #open}, on a socket with a small receive buffer whose body is not read until
     * {@link #resume}: the server's writes to it soon find the socket full.
     */
    public static SseStream openPaused(int port, String query) throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        s.connect(new java.net.InetSocketAddress("127.0.0.1", port));
        return send(s, "GET /v1/sse?" + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", false);
    }

    /** Reads the body from now on (after {@link #openPaused}). */
    public void resume() {
        reading.countDown();
    }

    /** Sends {@code request} as written and reads the answer's head. */
    public static SseStream send(int port, String request) throws IOException {
        return send(new Socket("127.0.0.1", port), request, true);
    }

    private static SseStream send(Socket s, String request, boolean read) throws IOException {
        s.setSoTimeout(30_000);
        s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
        s.getOutputStream().flush();
        InputStream in = s.getInputStream();
        String[] lines = readHead(in).split("\r\n");
        Map<String, String> headers = new TreeMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    lines[i].substring(colon + 1).trim());
        }
        SseStream stream = new SseStream(s, Integer.parseInt(lines[0].split(" ")[1]), headers, in);
        if (read) {
            stream.resume();
        }
        Thread reader = new Thread(stream::readBody, "sse-reader");
        reader.setDaemon(true);
        reader.start();
        return stream;
    }

    public String header(String name) {
        return headers.get(name.toLowerCase(Locale.ROOT));
    }

    public Output output() throws IOException {
        return new Output(socket);
    }

    /** Writes raw bytes after the request (SSE is one-way: the server should end the stream). */
    public record Output(Socket socket) {
        public void write(String s) throws IOException {
            socket.getOutputStream().write(s.getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
        }
    }

    /** The next message that is not a comment, within {@code timeout}; fails otherwise. */
    public Message next(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Message m = messages.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (m == null) {
                throw new AssertionError("no SSE message within " + timeout);
            }
            if (m.comment() == null) {
                return m;
            }
        }
    }

    private static final Pattern CLOSE =
            Pattern.compile("\\{\"code\":(\\d+),\"retryMs\":(\\d+)}");

    /**
     * The stream's {@code close} event as {code, retryMs}, within {@code timeout}, after checking
     * that its {@code retry:} line says the same and that the response ended (its terminal chunk).
     */
    public long[] closeEvent(Duration timeout) throws Exception {
        Message m;
        do {
            m = next(timeout);
        } while (!"close".equals(m.event()));
        Matcher close = CLOSE.matcher(m.data());
        if (!close.matches()) {
            throw new AssertionError("close event data: " + m.data());
        }
        long retry = Long.parseLong(close.group(2));
        if (m.retry() == null || m.retry() != retry) {
            throw new AssertionError("retry: " + m.retry() + " but the close event says " + retry);
        }
        if (!ended.get(5, TimeUnit.SECONDS)) {
            throw new AssertionError("the response ended without its terminal chunk");
        }
        return new long[] {Long.parseLong(close.group(1)), retry};
    }

    /** The next {@code n} messages with an event type of {@code null} (the default "message"). */
    public List<Message> events(int n, Duration timeout) throws InterruptedException {
        List<Message> out = new ArrayList<>();
        while (out.size() < n) {
            Message m = next(timeout);
            if (m.event() == null && m.data() != null) {
                out.add(m);
            }
        }
        return out;
    }

    private void readBody() {
        try {
            reading.await();
            boolean chunked = "chunked".equalsIgnoreCase(header("transfer-encoding"));
            while (true) {
                if (!chunked) {
                    byte[] buf = new byte[8192];
                    int n = in.read(buf);
                    if (n < 0) {
                        ended.complete(false);
                        return;
                    }
                    feed(buf, n, false);
                    continue;
                }
                String sizeLine = readLine(in);
                if (sizeLine == null) {
                    ended.complete(false);
                    return;
                }
                int size = Integer.parseInt(sizeLine.trim(), 16);
                if (size == 0) {
                    readLine(in);
                    ended.complete(true);
                    return;
                }
                byte[] chunk = in.readNBytes(size);
                chunks++;
                readLine(in);
                feed(chunk, chunk.length, true);
            }
        } catch (SocketTimeoutException e) {
            ended.completeExceptionally(e);
        } catch (IOException e) {
            ended.complete(false);
        } catch (InterruptedException e) {
            ended.complete(false);
            Thread.currentThread().interrupt();
        }
    }

    private void feed(byte[] bytes, int n, boolean wholeChunk) {
        pending.write(bytes, 0, n);
        String text = pending.toString(StandardCharsets.UTF_8);
        int end;
        while ((end = text.indexOf("\n\n")) >= 0) {
            messages.add(parse(text.substring(0, end)));
            text = text.substring(end + 2);
        }
        if (wholeChunk && !text.isEmpty()) {
            splitMessages++; // a chunk ended inside a message
        }
        pending.reset();
        pending.writeBytes(text.getBytes(StandardCharsets.UTF_8));
    }

    private static Message parse(String block) {
        String event = null, id = null, comment = null;
        StringBuilder data = null;
        Long retry = null;
        for (String line : block.split("\n", -1)) {
            if (line.startsWith(":")) {
                comment = line.substring(1).trim();
                continue;
            }
            int colon = line.indexOf(':');
            String field = colon < 0 ? line : line.substring(0, colon);
            String value = colon < 0 ? "" : line.substring(colon + 1).replaceFirst("^ ", "");
            switch (field) {
                case "event" -> event = value;
                case "id" -> id = value;
                case "retry" -> retry = Long.parseLong(value);
                case "data" -> data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                default -> throw new AssertionError("unknown SSE field in: " + block);
            }
        }
        return new Message(event, id, data == null ? null : data.toString(), retry, comment);
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed before a response: " + head);
            }
            head.write(b);
            matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            if (b == '\n') {
                String s = line.toString(StandardCharsets.ISO_8859_1);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            line.write(b);
        }
        return null;
    }

    /** Stops reading; the socket is closed (the server sees the client go). */
    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
