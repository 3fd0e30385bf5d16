package io.pushd.server.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A WebSocket that completes the upgrade and then does only what the test says: for silent or stalled peers. */
public final class RawWebSocket implements AutoCloseable {

    public final Socket socket;
    public final String responseHead;

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

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
