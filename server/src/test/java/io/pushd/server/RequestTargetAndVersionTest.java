package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.testing.Http;
import io.pushd.server.testing.RawHttp;
import io.pushd.server.testing.TestServers;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Requests no real client sends but anyone can: a request target that does not percent-decode, an
 * HTTP version other than 1.x, a missing or doubled Host. Each gets a JSON answer, not a silent close.
 */
class RequestTargetAndVersionTest {

    @TempDir
    static Path dataDir;
    static PushServer server;
    static int port;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(dataDir);
        port = server.port();
        assertThat(Http.publish(port, "t", "{\"n\":1}").status()).isEqualTo(201);
    }

    @AfterAll
    static void stop() {
        // nothing sent here is ever stored
        assertThat(server.store().range("t").head()).isEqualTo(1);
        assertThat(server.store().topicCount()).isEqualTo(1);
        server.close();
    }

    private static void assertJsonError(RawHttp.Response r, int status, String code) {
        assertThat(r.status()).as(r.body()).isEqualTo(status);
        assertThat(r.header("content-type")).isEqualTo("application/json");
        assertThat(r.json().path("error").asText()).isEqualTo(code);
        assertThat(r.json().path("message").asText()).isNotBlank();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/v1/topics/a%zz/events", "/v1/topics/a%/events", "/x%zz", "/a%", "/v1/topics/a%zz",
        "/healthz?x=%zz", "/v1/live?topic=a%zz", "/v1/live?topic=t&after=%e"})
    void aTargetThatDoesNotPercentDecodeIs400(String target) throws Exception {
        String req = target.startsWith("/v1/live")
                ? RawHttp.upgrade(target.substring("/v1/live?".length()), "")
                : "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 2\r\n\r\n{}";

        RawHttp.Response r = RawHttp.exchange(port, req);

        assertJsonError(r, 400, "bad_request");
        assertThat(r.json().path("message").asText()).isEqualTo("malformed percent-encoding in the request target");
    }

    @Test
    void afterABadTargetTheKeepAliveConnectionStillServesTheNextRequest() throws Exception {
        String bad = "GET /x%zz HTTP/1.1\r\nHost: x\r\n\r\n";
        String good = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write((bad + good).getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();

            assertThat(readResponse(in)).startsWith("HTTP/1.1 400 ").contains("malformed percent-encoding");
            assertThat(readResponse(in)).startsWith("HTTP/1.1 200 ").contains("\"up\"");
        }
    }

    private static String readResponse(InputStream in) throws Exception {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int b = in.read();
            assertThat(b).as("connection closed after: %s", head).isNotNegative();
            head.write(b);
        }
        String h = head.toString(StandardCharsets.ISO_8859_1);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(h);
        assertThat(m.find()).as(h).isTrue();
        return h + new String(in.readNBytes(Integer.parseInt(m.group(1))), StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @ValueSource(strings = {"HTTP/9.9", "HTTP/2.0", "HTTP/0.9", "HTTP/3.1"})
    void aVersionOtherThanOneIs505(String version) throws Exception {
        RawHttp.Response r = RawHttp.exchange(port, "GET /healthz " + version + "\r\nHost: x\r\n\r\n");

        assertJsonError(r, 505, "http_version_not_supported");
        assertThat(r.header("connection")).isEqualTo("close");
    }

    @Test
    void anUpgradeWithAnUnsupportedVersionIs505() throws Exception {
        String req = RawHttp.upgrade("topic=t", "").replace(" HTTP/1.1\r\n", " HTTP/9.9\r\n");

        assertJsonError(RawHttp.exchange(port, req), 505, "http_version_not_supported");
    }

    @Test
    void aProtocolThatIsNotHttpIs400() throws Exception {
        assertJsonError(RawHttp.exchange(port, "GET /healthz RTSP/1.0\r\nHost: x\r\n\r\n"), 400, "bad_request");
    }

    @Test
    void aHigherMinorVersionOfHttpOneIsServedAsOnePointOne() throws Exception {
        RawHttp.Response r = RawHttp.exchange(port, "GET /healthz HTTP/1.2\r\nHost: x\r\nConnection: close\r\n\r\n");

        assertThat(r.status()).isEqualTo(200);
    }

    @Test
    void httpOnePointOneWithoutHostIs400() throws Exception {
        RawHttp.Response r = RawHttp.exchange(port, "GET /healthz HTTP/1.1\r\n\r\n");

        assertJsonError(r, 400, "bad_request");
        assertThat(r.json().path("message").asText()).contains("Host");
    }

    @Test
    void twoHostHeadersAre400InAnyVersion() throws Exception {
        assertJsonError(RawHttp.exchange(port, "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
                400, "bad_request");
        assertJsonError(RawHttp.exchange(port, "GET /healthz HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n"),
                400, "bad_request");
        assertJsonError(RawHttp.exchange(port, "POST /v1/topics/t/events HTTP/1.1\r\nHost: a\r\nHost: b\r\n"
                + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"), 400, "bad_request");
    }

    @Test
    void anUpgradeWithoutHostIs400() throws Exception {
        String req = RawHttp.upgrade("topic=t", "").replace("Host: 127.0.0.1\r\n", "");

        assertJsonError(RawHttp.exchange(port, req), 400, "bad_request");
    }

    @Test
    void httpOnePointZeroWithoutHostIsServed() throws Exception {
        RawHttp.Response r = RawHttp.exchange(port, "GET /healthz HTTP/1.0\r\n\r\n");

        assertThat(r.status()).isEqualTo(200);
        assertThat(r.json().path("status").asText()).isEqualTo("up");
    }
}
