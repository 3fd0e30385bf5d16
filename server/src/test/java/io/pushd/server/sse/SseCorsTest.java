package io.pushd.server.sse;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.PushServer;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.RawHttp;
import io.pushd.server.testing.SseStream;
import io.pushd.server.testing.TestServers;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CORS for SSE and publish from security.allowedOrigins, and the publish preflight. */
class SseCorsTest {

    static final String APP = "https://app.example";

    @TempDir
    Path dataDir;
    PushServer server;

    void start(List<String> allowedOrigins) throws Exception {
        ServerConfig c = TestServers.config(dataDir);
        server = TestServers.start(c.withSecurity(new ServerConfig.Security(allowedOrigins, List.of())));
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void anAllowedOriginIsEchoedOnTheStreamAForeignOneIs403AndNoOriginIsSameOrigin() throws Exception {
        start(List.of(APP));
        try (SseStream ok = SseStream.open(server.port(), "topic=t", "Origin: " + APP);
             SseStream sameOrigin = SseStream.open(server.port(), "topic=t");
             SseStream foreign = SseStream.open(server.port(), "topic=t", "Origin: https://evil.example")) {
            assertThat(ok.status).isEqualTo(200);
            assertThat(ok.header("access-control-allow-origin")).isEqualTo(APP);
            assertThat(ok.header("vary")).isEqualToIgnoringCase("origin");
            assertThat(sameOrigin.status).isEqualTo(200);
            assertThat(foreign.status).isEqualTo(403);
            assertThat(foreign.header("access-control-allow-origin")).isNull();
        }
    }

    @Test
    void withAnEmptyListAnyOriginGetsAStar() throws Exception {
        start(List.of());
        try (SseStream s = SseStream.open(server.port(), "topic=t", "Origin: https://any.example")) {
            assertThat(s.status).isEqualTo(200);
            assertThat(s.header("access-control-allow-origin")).isEqualTo("*");
        }
    }

    @Test
    void thePublishPreflightAllowsPostWithItsHeadersAndThePublishCarriesTheOrigin() throws Exception {
        start(List.of(APP));
        RawHttp.Response pre = RawHttp.exchange(server.port(), "OPTIONS /v1/topics/t/events HTTP/1.1\r\nHost: x\r\n"
                + "Origin: " + APP + "\r\nAccess-Control-Request-Method: POST\r\n"
                + "Access-Control-Request-Headers: content-type, idempotency-key\r\nConnection: close\r\n\r\n");
        assertThat(pre.status()).isEqualTo(200);
        assertThat(pre.header("access-control-allow-origin")).isEqualTo(APP);
        assertThat(pre.header("access-control-allow-methods")).contains("POST");
        assertThat(pre.header("access-control-allow-headers").toLowerCase())
                .contains("content-type", "idempotency-key", "authorization");
        assertThat(pre.header("access-control-max-age")).isEqualTo("600");

        String body = "{\"a\":1}";
        RawHttp.Response pub = RawHttp.exchange(server.port(), "POST /v1/topics/t/events HTTP/1.1\r\nHost: x\r\n"
                + "Origin: " + APP + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length()
                + "\r\nConnection: close\r\n\r\n" + body);
        assertThat(pub.status()).isEqualTo(201);
        assertThat(pub.header("access-control-allow-origin")).isEqualTo(APP);

        RawHttp.Response foreign = RawHttp.exchange(server.port(), "OPTIONS /v1/topics/t/events HTTP/1.1\r\n"
                + "Host: x\r\nOrigin: https://evil.example\r\nAccess-Control-Request-Method: POST\r\n"
                + "Connection: close\r\n\r\n");
        assertThat(foreign.header("access-control-allow-origin")).isNull();
    }
}
