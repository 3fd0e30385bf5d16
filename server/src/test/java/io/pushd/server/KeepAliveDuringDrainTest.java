package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.ServerState;
import io.pushd.server.testing.RawHttp;
import io.pushd.server.testing.TestServers;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A publisher on a kept-alive connection during the drain: each answer from the stop on says
 * {@code Connection: close} and the server then ends the connection with a FIN, so the client's
 * next request goes on a new connection (to a node that serves) and is never reset unanswered when
 * the stop closes what is left.
 */
class KeepAliveDuringDrainTest {

    @TempDir
    Path dir;

    private PushServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void fromTheDrainOnEachHttpAnswerClosesItsKeptAliveConnection() throws Exception {
        ServerConfig c = TestServers.config(dir.resolve("data"));
        c = c.withDrain(new ServerConfig.Drain(Duration.ofSeconds(3), c.drain().minWindow(), c.drain().deadline(),
                c.drain().expectRestart()));
        server = TestServers.start(c);
        try (Socket before = connect(); Socket during = connect(); Socket pipelined = connect()) {
            String first = RawHttp.exchangeOn(before, publish("{\"n\":1}"));
            assertThat(first).startsWith("HTTP/1.1 201");
            assertThat(first.toLowerCase(Locale.ROOT)).doesNotContain("connection: close");
            assertThat(RawHttp.exchangeOn(during, get("/healthz"))).startsWith("HTTP/1.1 200");

            Thread drain = new Thread(server::drain, "test-drain");
            drain.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (server.state() != ServerState.DRAINING && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(server.state()).isEqualTo(ServerState.DRAINING);

            String second = RawHttp.exchangeOn(before, publish("{\"n\":2}"));
            assertThat(second).as("still served in the balancer grace").startsWith("HTTP/1.1 201");
            assertThat(second.toLowerCase(Locale.ROOT)).contains("connection: close");
            assertThat(before.getInputStream().read()).as("then a FIN").isEqualTo(-1);

            // two publishes in one write: the first is answered with its close, the second never runs
            String both = publishTo("p", "{\"n\":1}") + publishTo("p", "{\"n\":2}");
            String first2 = RawHttp.exchangeOn(pipelined, both);
            assertThat(first2).startsWith("HTTP/1.1 201").endsWith("-1\"}");
            assertThat(pipelined.getInputStream().read()).isEqualTo(-1);
            assertThat(server.store().range("p").head()).as("the one behind the close was not stored").isEqualTo(1);

            String status = RawHttp.exchangeOn(during, get("/v1/topics/t"));
            assertThat(status).startsWith("HTTP/1.1 200");
            assertThat(status.toLowerCase(Locale.ROOT)).contains("connection: close");
            assertThat(during.getInputStream().read()).isEqualTo(-1);
            drain.join(10_000);
        }
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
        s.setSoTimeout(10_000);
        return s;
    }

    private static String publish(String json) {
        return publishTo("t", json);
    }

    private static String publishTo(String topic, String json) {
        return "POST /v1/topics/" + topic + "/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + json.length() + "\r\n\r\n" + json;
    }

    private static String get(String path) {
        return "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
    }
}
