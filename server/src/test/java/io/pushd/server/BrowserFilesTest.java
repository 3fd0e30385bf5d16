package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.TestServers;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code /v1/client.js}, {@code /v1/client.d.ts} and {@code /demo}, fetched with the JDK's HTTP client. */
class BrowserFilesTest {

    /** The sources the jar must carry byte for byte (tests run in server/). */
    private static final Path CLIENTS_JS = Path.of("..", "clients", "js");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path dataDir;
    PushServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private HttpResponse<byte[]> fetch(String method, String path, String ifNoneMatch) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(10)).method(method, HttpRequest.BodyPublishers.noBody());
        if (ifNoneMatch != null) {
            b.header("If-None-Match", ifNoneMatch);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }

    @Test
    void theClientIsServedAsTheExactBytesOfPushClientJsWithCachingHeaders() throws Exception {
        server = TestServers.start(dataDir);

        HttpResponse<byte[]> r = fetch("GET", "/v1/client.js", null);

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo(Files.readAllBytes(CLIENTS_JS.resolve("push-client.js")));
        assertThat(header(r, "content-type")).isEqualTo("text/javascript; charset=utf-8");
        assertThat(header(r, "cache-control")).isEqualTo("public, max-age=300");
        assertThat(header(r, "x-content-type-options")).isEqualTo("nosniff");
        assertThat(header(r, "etag")).matches("\"[A-Za-z0-9_-]{27}\"");
    }

    @Test
    void theEtagIsAHashOfTheBytesSoItIsTheSameAfterARestart() throws Exception {
        server = TestServers.start(dataDir);
        String first = header(fetch("GET", "/v1/client.js", null), "etag");
        server.close();
        server = TestServers.start(dataDir);

        String second = header(fetch("GET", "/v1/client.js", null), "etag");

        byte[] hash = MessageDigest.getInstance("SHA-256")
                .digest(Files.readAllBytes(CLIENTS_JS.resolve("push-client.js")));
        assertThat(second).isEqualTo(first)
                .isEqualTo('"' + Base64.getUrlEncoder().withoutPadding().encodeToString(hash).substring(0, 27) + '"');
    }

    @Test
    void aMatchingIfNoneMatchGets304WithoutABodyAndAStaleOneGetsTheFile() throws Exception {
        server = TestServers.start(dataDir);
        String etag = header(fetch("GET", "/v1/client.js", null), "etag");

        HttpResponse<byte[]> same = fetch("GET", "/v1/client.js", etag);
        HttpResponse<byte[]> weakened = fetch("GET", "/v1/client.js", "\"other\", W/" + etag);
        HttpResponse<byte[]> stale = fetch("GET", "/v1/client.js", "\"other\"");

        assertThat(same.statusCode()).isEqualTo(304);
        assertThat(same.body()).isEmpty();
        assertThat(header(same, "etag")).isEqualTo(etag);
        assertThat(header(same, "cache-control")).isEqualTo("public, max-age=300");
        assertThat(weakened.statusCode()).isEqualTo(304);
        assertThat(stale.statusCode()).isEqualTo(200);
        assertThat(stale.body()).hasSize((int) Files.size(CLIENTS_JS.resolve("push-client.js")));
    }

    @Test
    void headAnswersTheHeadersAndLengthWithoutTheBody() throws Exception {
        server = TestServers.start(dataDir);

        HttpResponse<byte[]> r = fetch("HEAD", "/v1/client.js", null);

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEmpty();
        assertThat(header(r, "content-length")).isEqualTo(String.valueOf(Files.size(CLIENTS_JS.resolve("push-client.js"))));
        assertThat(header(r, "etag")).isNotNull();
    }

    @Test
    void theTypesAreServedNextToTheClient() throws Exception {
        server = TestServers.start(dataDir);

        HttpResponse<byte[]> r = fetch("GET", "/v1/client.d.ts", null);

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo(Files.readAllBytes(CLIENTS_JS.resolve("push-client.d.ts")));
        assertThat(header(r, "x-content-type-options")).isEqualTo("nosniff");
    }

    @Test
    void otherMethodsThanGetAndHeadAre405() throws Exception {
        server = TestServers.start(dataDir);

        HttpResponse<byte[]> r = fetch("POST", "/v1/client.js", null);

        assertThat(r.statusCode()).isEqualTo(405);
        assertThat(header(r, "allow")).isEqualTo("GET, HEAD");
    }

    @Test
    void theDemoPageIsServedWithAPolicyThatAllowsOnlyThisServerAndItsOwnInlineCode() throws Exception {
        server = TestServers.start(dataDir);

        HttpResponse<byte[]> r = fetch("GET", "/demo", null);

        byte[] page = Files.readAllBytes(CLIENTS_JS.resolve("demo/index.html"));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo(page);
        assertThat(header(r, "content-type")).isEqualTo("text/html; charset=utf-8");
        assertThat(header(r, "x-content-type-options")).isEqualTo("nosniff");
        String csp = header(r, "content-security-policy");
        assertThat(csp).startsWith("default-src 'none'; script-src 'self' 'sha256-")
                .contains("connect-src 'self'", "frame-ancestors 'none'")
                .doesNotContain("unsafe-inline", "http:", "https:", "*");
        String html = new String(page, StandardCharsets.UTF_8);
        String script = html.substring(html.indexOf("<script type=\"module\">") + "<script type=\"module\">".length(),
                html.indexOf("</script>"));
        String hash = Base64.getEncoder().encodeToString(
                MessageDigest.getInstance("SHA-256").digest(script.getBytes(StandardCharsets.UTF_8)));
        assertThat(csp).contains("script-src 'self' 'sha256-" + hash + "'");
        assertThat(fetch("GET", "/demo/", null).statusCode()).isEqualTo(200);
    }

    @Test
    void withTheDemoSwitchedOffTheDemoIs404AndTheClientIsStillServed() throws Exception {
        ServerConfig c = TestServers.config(dataDir);
        server = TestServers.start(c.withServer(c.server().withDemo(false)));

        HttpResponse<byte[]> demo = fetch("GET", "/demo", null);

        assertThat(demo.statusCode()).isEqualTo(404);
        assertThat(new String(demo.body(), StandardCharsets.UTF_8)).contains("\"error\":\"not_found\"");
        assertThat(fetch("GET", "/v1/client.js", null).statusCode()).isEqualTo(200);
    }
}
