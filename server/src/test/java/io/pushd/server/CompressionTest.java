package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.RawHttp;
import io.pushd.server.testing.TestServers;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.Deflater;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** permessage-deflate: off by default; when on, negotiated, and bounded against zip bombs. */
class CompressionTest {

    private static final String OFFER = "Sec-WebSocket-Extensions: permessage-deflate\r\n";

    @TempDir
    Path dataDir;
    PushServer server;

    @AfterEach
    void stop() {
        server.close();
    }

    private void start(boolean deflate) throws Exception {
        ServerConfig c = TestServers.config(dataDir);
        server = TestServers.start(c.withLimits(c.limits().withPermessageDeflate(deflate)));
    }

    /** Upgrades and returns the socket positioned after the 101 response head (returned in head[0]). */
    private Socket upgrade(String[] head) throws IOException {
        Socket s = new Socket("127.0.0.1", server.port());
        s.setSoTimeout(10_000);
        s.getOutputStream().write(RawHttp.upgrade("topic=t", OFFER).getBytes(StandardCharsets.ISO_8859_1));
        StringBuilder h = new StringBuilder();
        while (!h.toString().endsWith("\r\n\r\n")) {
            h.append((char) s.getInputStream().read());
        }
        head[0] = h.toString().toLowerCase();
        return s;
    }

    @Test
    void compressionIsNotNegotiatedByDefault() throws Exception {
        start(false);
        String[] head = new String[1];
        try (Socket s = upgrade(head)) {
            assertThat(head[0]).startsWith("http/1.1 101").doesNotContain("sec-websocket-extensions");
            int first = s.getInputStream().read(); // the subscribed frame
            assertThat(first & 0x40).as("RSV1 (compressed)").isZero();
        }
    }

    @Test
    void whenEnabledFramesAreCompressed() throws Exception {
        start(true);
        String[] head = new String[1];
        try (Socket s = upgrade(head)) {
            assertThat(head[0]).startsWith("http/1.1 101").contains("sec-websocket-extensions: permessage-deflate");
            int first = s.getInputStream().read();
            assertThat(first & 0x40).as("RSV1 (compressed)").isEqualTo(0x40);
        }
    }

    @Test
    void aCompressedMessageThatInflatesBeyondTheFrameLimitIsRefused() throws Exception {
        start(true);
        String[] head = new String[1];
        try (Socket s = upgrade(head)) {
            byte[] bomb = new byte[1024 * 1024];
            Arrays.fill(bomb, (byte) ' ');
            byte[] payload = deflate(bomb);
            assertThat(payload.length).isLessThan(65_536);
            s.getOutputStream().write(maskedFrame(0xC1, payload)); // FIN + RSV1 + text
            assertThat(closeCodeOrEof(s)).as("close code").isEqualTo(1009);
            assertThat(server.store().range("t").head()).isZero();
        }
    }

    @Test
    void aConnectionClosedForCorruptCompressedDataGivesItsSessionBack() throws Exception {
        start(true);
        String[] head = new String[1];
        for (int i = 0; i < 3; i++) {
            try (Socket s = upgrade(head)) {
                // FIN + RSV1 + text, "compressed" bytes that are no deflate stream (a reserved block type)
                s.getOutputStream().write(maskedFrame(0xC1, new byte[] {(byte) 0xFF, (byte) 0xFF, 0x00, 0x01, 0x02}));
                assertThat(closeCodeOrEof(s)).as("close code").isEqualTo(1007);
            } // the client closes too: the server's channel goes inactive, its failed inflater in the pipeline
        }
        // Before, Netty's inflater rethrew its failure when the channel went inactive, the event
        // never reached the session, and each such connection kept its session (and its
        // admission slot) for good.
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (server.liveConnections() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(server.liveConnections()).isZero();
    }

    @Test
    void reservedBitsTheExtensionDoesNotUseCloseWith1002() throws Exception {
        start(true);
        String[] head = new String[1];
        int[] firstBytes = {
            0xA1, // FIN + RSV2 + text
            0x91, // FIN + RSV3 + text
            0xC9, // FIN + RSV1 + ping: the extension compresses data frames only
            0x01, // text, not final, uncompressed: then a continuation with RSV1
        };
        for (int first : firstBytes) {
            try (Socket s = upgrade(head)) {
                s.getOutputStream().write(maskedFrame(first, "{}".getBytes(StandardCharsets.US_ASCII)));
                if (first == 0x01) {
                    s.getOutputStream().write(maskedFrame(0xC0, new byte[] {0x00})); // FIN + RSV1 + continuation
                }
                assertThat(closeCodeOrEof(s)).as("first byte %x", first).isEqualTo(1002);
            }
        }
    }

    @Test
    void rsv1FromAClientThatDidNotNegotiateTheExtensionClosesWith1002() throws Exception {
        start(true); // allowed by the configuration, not negotiated by this client
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(RawHttp.upgrade("topic=t", "").getBytes(StandardCharsets.ISO_8859_1));
            StringBuilder h = new StringBuilder();
            while (!h.toString().endsWith("\r\n\r\n")) {
                h.append((char) s.getInputStream().read());
            }
            assertThat(h.toString().toLowerCase()).startsWith("http/1.1 101").doesNotContain("sec-websocket-extensions");
            s.getOutputStream().write(maskedFrame(0xC1, "{}".getBytes(StandardCharsets.US_ASCII)));
            assertThat(closeCodeOrEof(s)).isEqualTo(1002);
        }
    }

    @Test
    void aCompressedMessageMayInflateToExactlyTheFrameLimit() throws Exception {
        start(true);
        String[] head = new String[1];
        for (int size : new int[] {65_536, 65_537}) {
            try (Socket s = upgrade(head)) {
                String prefix = "{\"type\":\"unsubscribe\",\"topic\":\"u\",\"pad\":\"";
                String message = prefix + "x".repeat(size - prefix.length() - 2) + "\"}";
                assertThat(message).hasSize(size);
                s.getOutputStream().write(maskedFrame(0xC1, deflate(message.getBytes(StandardCharsets.US_ASCII))));
                // what the server sends next: an answer to the message (text), or a close
                int code = closeCodeOrTextFrame(s);
                assertThat(code).as("inflated to %d bytes", size).isEqualTo(size == 65_536 ? 0 : 1009);
            }
        }
    }

    /** A raw DEFLATE block of {@code data}, its final empty block cut (RFC 7692 7.2.1). */
    private static byte[] deflate(byte[] data) {
        Deflater deflater = new Deflater(Deflater.BEST_COMPRESSION, true);
        deflater.setInput(data);
        ByteArrayOutputStream compressed = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        int n;
        while ((n = deflater.deflate(buf, 0, buf.length, Deflater.SYNC_FLUSH)) > 0) {
            compressed.write(buf, 0, n);
        }
        return Arrays.copyOf(compressed.toByteArray(), compressed.size() - 4);
    }

    /** After the subscribed frame: 0 when the server answers with a text frame, else the close code (-1: EOF). */
    private static int closeCodeOrTextFrame(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        boolean first = true;
        for (Frame f; (f = Frame.next(in)) != null; first = false) { // the first text frame: subscribed
            if (f.opcode() == 0x8) {
                return f.closeCode();
            }
            if (f.opcode() == 0x1 && !first) {
                return 0;
            }
        }
        return -1;
    }

    /** A server frame: its first byte and its (unmasked) body. */
    private record Frame(int b0, byte[] body) {
        int opcode() {
            return b0 & 0x0F;
        }

        /** A close frame's code; -1 when it has none or is compressed (which a close frame may not be). */
        int closeCode() {
            return (b0 & 0x40) != 0 || body.length < 2 ? -1 : ((body[0] & 0xFF) << 8) | (body[1] & 0xFF);
        }

        /** The next frame, or null at the end of the stream. */
        static Frame next(DataInputStream in) throws IOException {
            int b0 = in.read();
            if (b0 < 0) {
                return null;
            }
            int len = in.read() & 0x7F;
            if (len == 126) {
                len = in.readUnsignedShort();
            } else if (len == 127) {
                len = (int) in.readLong();
            }
            return new Frame(b0, in.readNBytes(len));
        }
    }

    private static byte[] maskedFrame(int firstByte, byte[] payload) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(firstByte);
        if (payload.length < 126) {
            out.write(0x80 | payload.length);
        } else {
            out.write(0x80 | 126);
            out.write(payload.length >> 8);
            out.write(payload.length & 0xFF);
        }
        byte[] mask = {1, 2, 3, 4};
        out.writeBytes(mask);
        for (int i = 0; i < payload.length; i++) {
            out.write(payload[i] ^ mask[i % 4]);
        }
        return out.toByteArray();
    }

    /** Reads server frames until a close frame (its code) or the end of the stream (-1). */
    private static int closeCodeOrEof(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        try {
            for (Frame f; (f = Frame.next(in)) != null; ) {
                if (f.opcode() == 0x8) {
                    return f.closeCode();
                }
            }
            return -1;
        } catch (java.net.SocketException reset) {
            return -1;
        }
    }
}
