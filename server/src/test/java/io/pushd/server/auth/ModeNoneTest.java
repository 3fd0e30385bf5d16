package io.pushd.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.pushd.server.PushServer;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** auth.mode none, the embedded default: subscribing is open, publishing only from security.publishAllowedFrom. */
class ModeNoneTest {

    @TempDir
    Path dir;

    private PushServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** A publish from a socket bound to {@code from}, a loopback address other than 127.0.0.1 if asked. */
    private static String publishFrom(String from, int port, String xForwardedFor) throws Exception {
        return publishWithHeaders(from, port, xForwardedFor == null ? "" : "X-Forwarded-For: " + xForwardedFor + "\r\n");
    }

    /** {@code headers}: whole header lines, each ending in CRLF. */
    private static String publishWithHeaders(String from, int port, String headers) throws Exception {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(from, 0));
            s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            s.setSoTimeout(5_000);
            String body = "{\"n\":1}";
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/topics/news/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + headers
                    + "Content-Length: " + body.length() + "\r\nConnection: close\r\n\r\n" + body)
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            in.transferTo(all);
            return all.toString(StandardCharsets.UTF_8);
        }
    }

    @Test
    void theOneCommandStartPublishesFromLoopbackWithoutAToken() throws Exception {
        server = TestServers.start(dir);
        assertThat(Http.publish(server.port(), "news", "{\"n\":1}").status()).isEqualTo(201);
        // a browser's client may send access_token in every mode: it is ignored, not a 400
        try (WsClient ws = WsClient.connect(server.port(), "topic=news&after=&access_token=anything")) {
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
        }
    }

    @Test
    void aPublishFromAnAddressOutsidePublishAllowedFromIs403() throws Exception {
        ServerConfig c = TestServers.config(dir);
        server = TestServers.start(c.withSecurity(c.security().withPublishAllowedFrom(List.of("127.0.0.1/32"))));
        assertThat(publishFrom("127.0.0.1", server.port(), null)).startsWith("HTTP/1.1 201");
        String refused = publishFrom("127.0.0.2", server.port(), null);
        assertThat(refused).startsWith("HTTP/1.1 403").contains("\"error\":\"publish_not_allowed\"");
        // a forwarded-for header from an untrusted peer changes nothing
        assertThat(publishFrom("127.0.0.2", server.port(), "127.0.0.1")).startsWith("HTTP/1.1 403");
        assertThat(Http.get(server.port(), "/metrics").body())
                .contains("push_auth_denied_total{reason=\"publish_not_allowed\"} 2.0");
    }

    @Test
    void behindATrustedProxyTheForwardedClientDecidesNotTheProxy() throws Exception {
        ServerConfig c = TestServers.config(dir);
        server = TestServers.start(c.withSecurity(new ServerConfig.Security(List.of(), List.of("127.0.0.1"),
                List.of("127.0.0.1/32"))));
        // the proxy on this host (127.0.0.1) forwards a client from elsewhere: refused
        assertThat(publishFrom("127.0.0.1", server.port(), "203.0.113.7")).startsWith("HTTP/1.1 403");
        assertThat(publishFrom("127.0.0.1", server.port(), "127.0.0.1")).startsWith("HTTP/1.1 201");
    }

    @Test
    void aForwardedForHeaderTheClientWroteBeforeTheProxysOwnLineDoesNotMakeItAllowed() throws Exception {
        ServerConfig c = TestServers.config(dir);
        server = TestServers.start(c.withSecurity(new ServerConfig.Security(List.of(), List.of("127.0.0.1"),
                List.of("127.0.0.1/32"))));
        // a proxy that adds its own X-Forwarded-For line (HAProxy's option forwardfor does) below the
        // client's: RFC 9110 section 5.3 reads the two lines as one list, the proxy's hop last
        String twoLines = "X-Forwarded-For: 127.0.0.1\r\nX-Forwarded-For: 203.0.113.7\r\n";
        assertThat(publishWithHeaders("127.0.0.1", server.port(), twoLines)).startsWith("HTTP/1.1 403");
    }

    @Test
    void startingBeyondLoopbackInModeNoneLogsOneWarning() throws Exception {
        try (LogCapture logs = new LogCapture()) {
            ServerConfig c = TestServers.config(dir);
            server = TestServers.start(c.withServer(new ServerConfig.Server("0.0.0.0", 0, 2)));
            assertThat(logs.messages(Level.WARN).stream().filter(m -> m.contains("auth.mode is none")).toList())
                    .hasSize(1);
        }
        server.close();
        try (LogCapture logs = new LogCapture()) {
            server = TestServers.start(dir.resolve("loopback"));
            assertThat(logs.messages(Level.WARN)).noneMatch(m -> m.contains("auth.mode is none"));
        }
    }
}
