package io.pushd.server.testing;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One WebSocket frame byte for byte (RFC 6455 section 5.2), so tests can send what no real client
 * would: reserved codes and opcodes, unmasked frames, 1-byte close bodies, invalid UTF-8.
 */
public record WsFrame(boolean fin, int rsv, int opcode, byte[] payload) {

    public static final int CONTINUATION = 0x0;
    public static final int TEXT = 0x1;
    public static final int BINARY = 0x2;
    public static final int CLOSE = 0x8;
    public static final int PING = 0x9;
    public static final int PONG = 0xA;

    public static WsFrame text(String text) {
        return new WsFrame(true, 0, TEXT, text.getBytes(StandardCharsets.UTF_8));
    }

    public static WsFrame binary(byte[] data) {
        return new WsFrame(true, 0, BINARY, data);
    }

    public static WsFrame ping(byte[] data) {
        return new WsFrame(true, 0, PING, data);
    }

    /** A close frame with exactly this body (empty, 1 byte, anything). */
    public static WsFrame closeBody(byte[] body) {
        return new WsFrame(true, 0, CLOSE, body);
    }

    /** A close frame with a 2-byte code and these reason bytes (which need not be UTF-8). */
    public static WsFrame close(int code, byte[] reason) {
        ByteBuffer b = ByteBuffer.allocate(2 + reason.length);
        b.putShort((short) code).put(reason);
        return closeBody(b.array());
    }

    public static WsFrame close(int code, String reason) {
        return close(code, reason.getBytes(StandardCharsets.UTF_8));
    }

    public boolean isClose() {
        return opcode == CLOSE;
    }

    /** The status code of a close frame, or -1 when its body is empty. */
    public int closeCode() {
        return payload.length < 2 ? -1 : ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF);
    }

    public String closeReason() {
        return payload.length <= 2 ? "" : new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8);
    }

    /** The frame on the wire; a client must mask (section 5.3), a test may choose not to. */
    public byte[] encode(boolean masked) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(payload.length + 14);
        out.write((fin ? 0x80 : 0) | (rsv & 0x7) << 4 | (opcode & 0xF));
        int maskBit = masked ? 0x80 : 0;
        if (payload.length < 126) {
            out.write(maskBit | payload.length);
        } else if (payload.length <= 0xFFFF) {
            out.write(maskBit | 126);
            out.write(payload.length >>> 8);
            out.write(payload.length & 0xFF);
        } else {
            out.write(maskBit | 127);
            out.writeBytes(ByteBuffer.allocate(8).putLong(payload.length).array());
        }
        if (!masked) {
            out.writeBytes(payload);
            return out.toByteArray();
        }
        byte[] key = new byte[4];
        ThreadLocalRandom.current().nextBytes(key);
        out.writeBytes(key);
        byte[] masked0 = new byte[payload.length];
        for (int i = 0; i < payload.length; i++) {
            masked0[i] = (byte) (payload[i] ^ key[i & 3]);
        }
        out.writeBytes(masked0);
        return out.toByteArray();
    }

    /** Reads one (unmasked, server) frame; null at a clean end of stream before its first byte. */
    public static WsFrame read(InputStream in) throws IOException {
        int b0 = in.read();
        if (b0 < 0) {
            return null;
        }
        int b1 = readByte(in);
        long len = b1 & 0x7F;
        if (len == 126) {
            len = (readByte(in) << 8) | readByte(in);
        } else if (len == 127) {
            len = ByteBuffer.wrap(readFully(in, 8)).getLong();
        }
        byte[] key = (b1 & 0x80) != 0 ? readFully(in, 4) : null;
        byte[] payload = readFully(in, Math.toIntExact(len));
        if (key != null) {
            for (int i = 0; i < payload.length; i++) {
                payload[i] ^= key[i & 3];
            }
        }
        return new WsFrame((b0 & 0x80) != 0, (b0 >> 4) & 0x7, b0 & 0xF, payload);
    }

    private static int readByte(InputStream in) throws IOException {
        int b = in.read();
        if (b < 0) {
            throw new EOFException("end of stream inside a frame");
        }
        return b;
    }

    private static byte[] readFully(InputStream in, int n) throws IOException {
        byte[] b = in.readNBytes(n);
        if (b.length < n) {
            throw new EOFException("end of stream inside a frame");
        }
        return b;
    }

    @Override
    public String toString() {
        return switch (opcode) {
            case CLOSE -> "Close(" + closeCode() + " \"" + closeReason() + "\")";
            case TEXT -> "Text(" + new String(payload, StandardCharsets.UTF_8) + ")";
            default -> "Frame(opcode " + opcode + ", " + payload.length + " bytes, fin " + fin + ")";
        };
    }
}
