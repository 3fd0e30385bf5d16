package io.pushd.server;

import io.pushd.server.config.Limits;
import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.RawHttp;
import io.pushd.server.testing.TestServers;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Connections of every kind are bounded: in all and per TCP peer address at accept, and in time
 * while they speak HTTP. Raw sockets, some bound to 127.0.0.2 to be a second client address.
 */
class ConnectionLimitsTest {

    private static final String HEALTHZ = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

    @TempDir
    Path dataDir;
    PushServer server;
    final List<Socket> sockets = new ArrayList<>();

    private void start(UnaryOperator<Limits> tweak) throws Exception {
        ServerConfig c = TestServers.config(dataDir);
        server = TestServers.start(c.withLimits(tweak.apply(c.limits())));
    }

    @AfterEach
    void stop() throws IOException {
        for (Socket s : sockets) {
            s.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void oneAddressOverItsCapIsRefusedAtAcceptWhileAnotherAddressPublishesAndProbes() throws Exception {
        start(l -> l.withTcpConnections(0, 50));
        List<Socket> first = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            first.add(connect("127.0.0.1"));
        }
        awaitTcpConnections(50); // accepts run on two event loops: let these be counted first
        // every one of those is held open (idle, within the first-request timeout) ...
        exchange(first.get(49), HEALTHZ);
        // ... and beyond the cap the same address is accepted, then closed before anything is read
        for (int i = 0; i < 10; i++) {
            assertThat(closedByServer(connect("127.0.0.1"))).as("connection %d over the cap", i + 1).isTrue();
        }
        assertThat(closedByServer(first.get(0))).as("those within the cap stay open").isFalse();
        Socket other = connect("127.0.0.2");
        assertThat(exchange(other, HEALTHZ)).startsWith("HTTP/1.1 200");
        String body = "{\"from\":\"elsewhere\"}";
        assertThat(exchange(other, "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length() + "\r\n\r\n" + body)).startsWith("HTTP/1.1 201");
        assertThat(server.metrics().scrape()).contains("push_connections_refused_total{reason=\"per_address\"} 10.0");
        // a slot frees when a connection goes
        first.get(0).close();
        awaitTcpConnections(50); // 49 of the first address and the other one
        assertThat(exchange(connect("127.0.0.1"), HEALTHZ)).startsWith("HTTP/1.1 200");
    }

    @Test
    void theTotalCapRefusesEveryAddressBeyondItWhileOpenConnectionsKeepWorking() throws Exception {
        start(l -> l.withTcpConnections(20, 10));
        List<Socket> open = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            open.add(connect("127.0.0.1"));
            open.add(connect("127.0.0.2"));
        }
        awaitTcpConnections(20);
        assertThat(closedByServer(connect("127.0.0.3"))).isTrue();
        for (Socket s : open) {
            assertThat(exchange(s, HEALTHZ)).startsWith("HTTP/1.1 200");
        }
        assertThat(server.metrics().scrape()).contains("push_connections_refused_total{reason=\"total\"} 1.0");
    }

    @Test
    void aKeptAliveConnectionWithNoRequestIsClosedAfterTheIdleTimeout() throws Exception {
        // the first-request timeout is long: only the idle timeout can close it
        start(l -> l.toBuilder().handshakeTimeout(Duration.ofSeconds(30)).permessageDeflate(false)
                .maxTcpConnections(0).maxTcpConnectionsPerAddress(0).httpIdleTimeout(Duration.ofMillis(500)).build());
        Socket s = connect("127.0.0.1");
        String answer = exchange(s, HEALTHZ);
        assertThat(answer).startsWith("HTTP/1.1 200").doesNotContainIgnoringCase("connection: close");
        s.setSoTimeout(10_000);
        assertThat(s.getInputStream().read()).as("closed by the server while idle").isEqualTo(-1);
    }

    @Test
    void aBusyKeptAliveConnectionPastItsMaxAgeIsAnsweredWithConnectionCloseAndClosed() throws Exception {
        start(l -> l.withHttpKeepAlive(Duration.ofSeconds(10), Duration.ofSeconds(1)));
        Socket s = connect("127.0.0.1");
        String first = exchange(s, HEALTHZ);
        assertThat(first.toLowerCase(Locale.ROOT)).doesNotContain("connection: close");
        String last = first;
        // a request every 200 ms: never idle, so only the age can end it
        for (int i = 0; i < 50 && !last.toLowerCase(Locale.ROOT).contains("connection: close"); i++) {
            Thread.sleep(200);
            last = exchange(s, HEALTHZ);
        }
        assertThat(last).startsWith("HTTP/1.1 200").containsIgnoringCase("connection: close");
        s.setSoTimeout(5_000);
        assertThat(s.getInputStream().read()).isEqualTo(-1);
    }

    private Socket connect(String from) throws IOException {
        Socket s = new Socket();
        sockets.add(s);
        s.bind(new InetSocketAddress(InetAddress.getByName(from), 0));
        s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
        return s;
    }

    /** True when the server closes the connection within a second without sending anything. */
    private static boolean closedByServer(Socket s) throws IOException {
        s.setSoTimeout(1_000);
        try {
            return s.getInputStream().read() == -1;
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (SocketException reset) {
            return true;
        }
    }

    /** Sends one request, returns the response head and body (by Content-Length). */
    private static String exchange(Socket s, String request) throws IOException {
        s.setSoTimeout(5_000);
        return RawHttp.exchangeOn(s, request);
    }

    private void awaitTcpConnections(int n) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (tcpConnections() != n && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(tcpConnections()).isEqualTo(n);
    }

    private int tcpConnections() {
        return (int) server.metrics().registry().get("push.tcp.connections").gauge().value();
    }
}
