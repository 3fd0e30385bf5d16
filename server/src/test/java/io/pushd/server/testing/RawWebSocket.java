package io.pushd.server.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A WebSocket that completes the upgrade and then does only what the test says: for silent or stalled peers. */
public final class RawWebSocket implements AutoCloseable {

    public final Socket socket;
    public final String responseHead;
    private boolean closeSent;

    private RawWebSocket(Socket socket, String responseHead) {
        this.socket = socket;
        this.responseHead = responseHead;
    }

    /** Upgrades with a receive buffer of {@code receiveBuffer} bytes (small = stalls early). */
    public static RawWebSocket open(int port, String query, int receiveBuffer) throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(receiveBuffer);
        s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 5_000);
        s.setSoTimeout(10_000);
        s.getOutputStream().write(RawHttp.upgrade(query, "").getBytes(StandardCharsets.ISO_8859_1));
        InputStream in = s.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed during upgrade: " + head);
            }
            head.append((char) b);
        }
        if (!head.toString().startsWith("HTTP/1.1 101")) {
            s.close();
            throw new IOException("upgrade refused: " + head);
        }
        return new RawWebSocket(s, head.toString());
    }

    /** Reads until the server closes the TCP connection; returns the bytes read, or -1 on timeout. */
    public long drainUntilClosed(long timeoutMillis) throws IOException {
        socket.setSoTimeout((int) timeoutMillis);
        long total = 0;
        byte[] buf = new byte[64 * 1024];
        try {
            int n;
            while ((n = socket.getInputStream().read(buf)) >= 0) {
                total += n;
            }
            return total;
        } catch (java.net.SocketTimeoutException e) {
            return -1;
        } catch (java.net.SocketException reset) {
            return total; // reset by the server also means closed
        }
    }

    /** Sends a frame masked, as a client must. */
    public void send(WsFrame frame) throws IOException {
        closeSent |= frame.isClose();
        sendBytes(frame.encode(true));
    }

    public void sendBytes(byte[] bytes) throws IOException {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
    }

    /** How the server ended the TCP connection, as the client saw it. */
    public enum End { EOF, RESET, TIMEOUT }

    /** Every frame the server sent until the connection ended, and how it ended. */
    public record Transcript(List<WsFrame> frames, End end) {
        public List<WsFrame> closes() {
            return frames.stream().filter(WsFrame::isClose).toList();
        }
    }

    /**
     * Reads frames until the server ends the connection. With {@code answerClose}, the first close
     * frame is answered with a close frame carrying the same code, as a well-behaved client does
     * (unless this client sent a close first: then the server's close is the answer).
     */
    public Transcript readUntilEnd(long timeoutMillis, boolean answerClose) throws IOException {
        socket.setSoTimeout((int) timeoutMillis);
        List<WsFrame> frames = new ArrayList<>();
        boolean answered = closeSent;
        try {
            WsFrame f;
            while ((f = WsFrame.read(socket.getInputStream())) != null) {
                frames.add(f);
                if (f.isClose() && answerClose && !answered) {
                    answered = true;
                    try {
                        send(f.closeCode() < 0 ? WsFrame.closeBody(new byte[0]) : WsFrame.close(f.closeCode(), ""));
                    } catch (java.net.SocketException closedAlready) {
                        // the server may already have closed; what it sent is what counts
                    }
                }
            }
            return new Transcript(frames, End.EOF);
        } catch (java.net.SocketTimeoutException e) {
            return new Transcript(frames, End.TIMEOUT);
        } catch (java.net.SocketException | java.io.EOFException e) {
            return new Transcript(frames, End.RESET); // reset, or cut inside a frame
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
