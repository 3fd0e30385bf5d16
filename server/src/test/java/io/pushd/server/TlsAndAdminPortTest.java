package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.io.FileInputStream;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on the daemon (wss:// and https:// with a certificate made by openssl at test time, and a
 * renewal picked up while a client stays connected) and {@code server.adminPort}.
 */
class TlsAndAdminPortTest {

    @TempDir
    Path dir;

    private PushServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** A self-signed certificate for 127.0.0.1 and its PKCS#8 key, as openssl writes them. */
    static void makeCertificate(Path cert, Path key, String cn) throws Exception {
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-subj", "/CN=" + cn, "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", key.toString(), "-out", cert.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
    }

    private static X509Certificate read(Path cert) throws Exception {
        try (InputStream in = new FileInputStream(cert.toFile())) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    private static SSLContext trusting(Path... certs) throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        for (int i = 0; i < certs.length; i++) {
            ks.setCertificateEntry("c" + i, read(certs[i]));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    /** The serial of the certificate the server presents to a new connection. */
    private BigInteger servedSerial(SSLContext ctx) throws Exception {
        try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", server.port())) {
            s.startHandshake();
            return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }

    @Test
    void wssAndHttpsWorkAndARenewedCertificateServesNewConnectionsWhileOpenOnesStay() throws Exception {
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        makeCertificate(cert, key, "first");
        Path cert2 = dir.resolve("cert2.pem");
        Path key2 = dir.resolve("key2.pem");
        makeCertificate(cert2, key2, "second");
        ServerConfig c = TestServers.config(dir.resolve("data"));
        server = TestServers.start(c.withTls(c.tls().withFiles(cert.toString(), key.toString())
                .withPollInterval(Duration.ofMillis(200))));
        SSLContext trust = trusting(cert, cert2);
        HttpClient https = HttpClient.newBuilder().sslContext(trust).connectTimeout(Duration.ofSeconds(5)).build();
        URI publish = URI.create("https://127.0.0.1:" + server.port() + "/v1/topics/news/events");
        HttpRequest post = HttpRequest.newBuilder(publish).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"n\":1}")).build();

        try (WsClient ws = WsClient.connect(https, URI.create("wss://127.0.0.1:" + server.port() + "/v1/live?topic=news"),
                Map.of())) {
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
            assertThat(https.send(post, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(201);
            assertThat(ws.awaitEvents(1, Duration.ofSeconds(5))).hasSize(1);
            assertThat(servedSerial(trust)).isEqualTo(read(cert).getSerialNumber());

            // a renewal: both files replaced (new inodes, as certbot's symlink swap or cert-manager do)
            Files.copy(key2, key, StandardCopyOption.REPLACE_EXISTING);
            Files.copy(cert2, cert, StandardCopyOption.REPLACE_EXISTING);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.tls().generation() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(server.tls().generation()).isEqualTo(2);
            assertThat(servedSerial(trust)).isEqualTo(read(cert2).getSerialNumber());

            // the connection opened on the old certificate is still there and served
            assertThat(https.send(post, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(201);
            assertThat(ws.awaitEvents(1, Duration.ofSeconds(5))).hasSize(1);
            assertThat(ws.closeCode).isNotDone();

            // the close handshake over TLS: close_notify goes out before the FIN, the client sees a clean close
            ws.socket().sendClose(1000, "bye").get(5, TimeUnit.SECONDS);
            assertThat(ws.awaitClose(Duration.ofSeconds(5))).isEqualTo(1000);
        }
    }

    @Test
    void withAnAdminPortTheStatusRoutesAreServedThereOnly() throws Exception {
        ServerConfig c = TestServers.config(dir);
        server = TestServers.start(c.withServer(c.server().withAdminPort(0)));
        int admin = server.adminPort();
        assertThat(admin).isPositive().isNotEqualTo(server.port());
        assertThat(Http.get(admin, "/metrics").body()).contains("push_connections");
        assertThat(Http.get(admin, "/healthz").status()).isEqualTo(200);
        assertThat(Http.get(admin, "/readyz").status()).isEqualTo(200);
        assertThat(Http.get(admin, "/v1/topics/news").status()).isEqualTo(404);
        for (String path : new String[] {"/metrics", "/healthz", "/readyz"}) {
            Http.Response r = Http.get(server.port(), path);
            assertThat(r.status()).as(path).isEqualTo(404);
            assertThat(r.json().path("error").asText()).isEqualTo("not_found");
        }
        assertThat(Http.publish(server.port(), "news", "{}").status()).isEqualTo(201);
    }

    @Test
    void withoutAnAdminPortThereIsNone() throws Exception {
        server = TestServers.start(dir);
        assertThat(server.adminPort()).isEqualTo(-1);
        assertThat(Http.get(server.port(), "/metrics").status()).isEqualTo(200);
    }
}
