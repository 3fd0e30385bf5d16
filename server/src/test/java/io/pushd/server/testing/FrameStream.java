package io.pushd.server.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.ProtocolCodec;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A WebSocket client over a plain socket that reads every frame as it comes, on a thread of its
 * own (as a browser does: pings are answered), and checks each strictly: FIN, no RSV bits, text
 * (valid UTF-8 holding one JSON value), ping or pong; anything else ends the stream with a reason. For stress tests whose server writes a large replay right behind the
 * 101: the JDK's {@code java.net.http} client (17.0.15) then, under load, now and then reports
 * "Invalid UTF-8 in frame TEXT" for frames a packet capture shows intact on the wire (the
 * failing frame straddled the end of the client's first 16 KiB read, which also held the
 * handshake response), which no server change can prevent.
 */
public final class FrameStream implements AutoCloseable {

    private final RawWebSocket ws;
    private final BlockingQueue<JsonNode> messages = new LinkedBlockingQueue<>();
    private volatile String failure;
    private final Thread reader;

    private FrameStream(RawWebSocket ws) {
        this.ws = ws;
        this.reader = new Thread(this::readAll, "frame-stream-" + ws.socket.getLocalPort());
        reader.setDaemon(true);
        reader.start();
    }

    /** Upgrades {@code /v1/live?query} and starts reading. */
    public static FrameStream connect(int port, String query) throws IOException {
        return new FrameStream(RawWebSocket.open(port, query, 256 * 1024));
    }

    private void readAll() {
        try {
            InputStream in = new BufferedInputStream(ws.socket.getInputStream(), 64 * 1024);
            ws.socket.setSoTimeout(0); // the test's next() times out, not the reader
            long frames = 0;
            WsFrame f;
            while ((f = WsFrame.read(in)) != null) {
                frames++;
                if (!f.fin() || f.rsv() != 0) {
                    failure = "frame " + frames + " is fragmented or has RSV bits: " + f;
                    return;
                }
                if (f.isClose()) {
                    failure = "closed by the server: " + f;
                    return;
                }
                if (f.opcode() == WsFrame.PING) {
                    ws.send(new WsFrame(true, 0, WsFrame.PONG, f.payload())); // as a browser does
                    continue;
                }
                if (f.opcode() == WsFrame.PONG) {
                    continue;
                }
                if (f.opcode() != WsFrame.TEXT) {
                    failure = "frame " + frames + " is neither text, ping nor pong: " + f;
                    return;
                }
                String text;
                try {
                    text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .decode(ByteBuffer.wrap(f.payload())).toString();
                } catch (CharacterCodingException e) {
                    failure = "frame " + frames + " is not UTF-8: " + java.util.HexFormat.of().formatHex(f.payload());
                    return;
                }
                messages.add(ProtocolCodec.mapper().readTree(text));
            }
            failure = "the server ended the connection without a close frame";
        } catch (IOException | RuntimeException e) {
            if (failure == null && !ws.socket.isClosed()) {
                failure = "read failed: " + e;
            }
        }
    }

    /** The next text message, or fails (saying why the stream ended, if it did) after 10 s. */
    public JsonNode next() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            JsonNode n = messages.poll(50, TimeUnit.MILLISECONDS);
            if (n != null) {
                return n;
            }
            if (!reader.isAlive() && messages.isEmpty()) {
                throw new AssertionError("the stream ended: " + failure); // at once, not after the timeout
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no message within 10 s");
            }
        }
    }

    @Override
    public void close() throws IOException {
        ws.close();
    }
}
