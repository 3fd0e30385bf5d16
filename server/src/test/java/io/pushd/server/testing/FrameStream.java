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
 * own (as a browser does), and checks each strictly: unmasked, FIN, a text frame of valid UTF-8
 * holding one JSON value. For stress tests whose server writes a large replay right behind the
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
                if (f.opcode() != WsFrame.TEXT) {
                    continue; // pings: nothing to check here
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
        } catch (IOException e) {
            if (failure == null && !ws.socket.isClosed()) {
                failure = "read failed: " + e;
            }
        }
    }

    /** The next text message, or fails (saying why the stream ended, if it did) after 10 s. */
    public JsonNode next() throws InterruptedException {
        JsonNode n = messages.poll(Duration.ofSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
        if (n == null) {
            throw new AssertionError("no message within 10 s" + (failure == null ? "" : "; " + failure));
        }
        return n;
    }

    @Override
    public void close() throws IOException {
        ws.close();
    }
}
