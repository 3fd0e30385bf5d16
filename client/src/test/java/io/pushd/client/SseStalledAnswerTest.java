package io.pushd.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.client.testing.Recorder;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An SSE attempt whose answer is an error head with a body that does not end (a stalled proxy or
 * server): the attempt fails within the handshake timeout, and the listener hears the status. It
 * used to wait for the 60 s silence bound and then report a bare ClosedChannelException (seen as
 * an 80 s gap in a CI restart's trail).
 */
class SseStalledAnswerTest {

    private final ClientResources resources = ClientResources.create(1);
    private final Recorder recorder = new Recorder();
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private ServerSocket server;

    @AfterEach
    void stop() throws IOException {
        resources.close();
        for (Socket s : accepted) {
            s.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void anErrorHeadWhoseBodyNeverEndsFailsTheAttemptWithinTheHandshakeTimeoutAndNamesTheStatus() throws Exception {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::answerWithAStalledError, "stalled-server");
        acceptor.setDaemon(true);
        acceptor.start();
        long t0 = System.nanoTime();
        resources.newClient(PushClientOptions.builder("127.0.0.1", server.getLocalPort()).topic("a")
                .transport(Transport.SSE).handshakeTimeout(Duration.ofMillis(500))
                .baseDelay(Duration.ofSeconds(30)).build(), recorder).start();

        Recorder.await("a failed attempt", Duration.ofSeconds(10), () -> !recorder.connectFailures.isEmpty());
        double seconds = (System.nanoTime() - t0) / 1e9;

        assertThat(seconds).as("within the 0.5 s handshake timeout, not the 60 s silence bound").isLessThan(5);
        Throwable cause = recorder.connectFailures.get(0);
        assertThat(cause).isInstanceOf(IOException.class).hasMessageContaining("503")
                .hasMessageContaining("did not end within 500 ms");
        assertThat(recorder.connected).as("never opened").isEmpty();
    }

    /** Each connection: reads the request head, answers a 503 head and a chunk, then says nothing more. */
    private void answerWithAStalledError() {
        try {
            while (!server.isClosed()) {
                Socket s = server.accept();
                accepted.add(s);
                InputStream in = s.getInputStream();
                int matched = 0;
                byte[] end = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
                while (matched < end.length) {
                    int b = in.read();
                    if (b < 0) {
                        break;
                    }
                    matched = b == end[matched] ? matched + 1 : (b == end[0] ? 1 : 0);
                }
                OutputStream out = s.getOutputStream();
                out.write(("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"err\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
        } catch (IOException closed) {
            // the test is over
        }
    }
}
