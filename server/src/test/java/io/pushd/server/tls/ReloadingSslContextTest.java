package io.pushd.server.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.pushd.server.config.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Real handshakes over real sockets against a tiny Netty echo server whose initializer asks the
 * holder for a handler per connection, with certificates made by {@code openssl} at test time.
 */
class ReloadingSslContextTest {

    static final Duration POLL = Duration.ofMillis(100);

    @TempDir
    Path dir;
    ReloadingSslContext tls;
    EventLoopGroup group;
    Channel server;

    @BeforeAll
    static void needsOpenssl() {
        boolean ok;
        try {
            ok = new ProcessBuilder("openssl", "version").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            ok = false;
        }
        assumeTrue(ok, "openssl is needed to make test certificates");
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (server != null) {
            server.close().sync();
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
        if (tls != null) {
            tls.close();
        }
    }

    /** A self-signed P-256 certificate for 127.0.0.1 named {@code cn}, written to {@code <name>.crt/.key}. */
    Path[] certificate(String name, String cn) throws Exception {
        Path crt = dir.resolve(name + ".crt");
        Path key = dir.resolve(name + ".key");
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:P-256", "-nodes", "-keyout", key.toString(), "-out", crt.toString(), "-days", "2",
                "-subj", "/CN=" + cn, "-addext", "subjectAltName=IP:127.0.0.1")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        assertThat(Files.readString(key)).startsWith("-----BEGIN PRIVATE KEY-----");
        return new Path[] {crt, key};
    }

    static void replace(Path from, Path to) throws IOException {
        Path tmp = to.resolveSibling(to.getFileName() + ".new");
        Files.copy(from, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    int startServer(TlsConfig config) throws InterruptedException {
        tls = ReloadingSslContext.start(config);
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast("tls", tls.newHandler(ch.alloc()));
                        ch.pipeline().addLast("echo", new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ctx.writeAndFlush(msg);
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                ctx.close(); // a refused handshake (the protocol test) is expected here
                            }
                        });
                    }
                })
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync().channel();
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** A client that trusts anything and remembers what it was shown (the test checks the certificate itself). */
    static SSLSocket connect(int port, String... protocols) throws Exception {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, new TrustManager[] {new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        }}, new SecureRandom());
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(), port);
        s.setSoTimeout(5_000);
        if (protocols.length > 0) {
            s.setEnabledProtocols(protocols);
        }
        s.startHandshake();
        return s;
    }

    static String peerName(SSLSocket s) throws Exception {
        return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
    }

    static String echo(SSLSocket s, String text) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
        InputStream in = s.getInputStream();
        byte[] buf = in.readNBytes(text.length());
        return new String(buf, StandardCharsets.UTF_8);
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    @Test
    void aRenewedCertificateServesNewHandshakesWhileOpenConnectionsStay() throws Exception {
        Path[] first = certificate("first", "first");
        Path[] second = certificate("second", "second");
        Path crt = dir.resolve("server.crt");
        Path key = dir.resolve("server.key");
        replace(first[0], crt);
        replace(first[1], key);
        int port = startServer(TlsConfig.defaults().withFiles(crt.toString(), key.toString()).withPollInterval(POLL));
        assertThat(tls.generation()).isEqualTo(1);

        try (SSLSocket old = connect(port)) {
            assertThat(peerName(old)).isEqualTo("CN=first");
            assertThat(old.getSession().getProtocol()).isEqualTo("TLSv1.3");
            assertThat(echo(old, "hello")).isEqualTo("hello");

            // a renewal tool writes the certificate, then the key
            replace(second[0], crt);
            Thread.sleep(POLL.toMillis() * 3); // the new certificate with the old key: not used
            assertThat(tls.generation()).isEqualTo(1);
            replace(second[1], key);
            await("the renewed pair", () -> tls.generation() == 2);

            try (SSLSocket fresh = connect(port)) {
                assertThat(peerName(fresh)).isEqualTo("CN=second");
                assertThat(echo(fresh, "new")).isEqualTo("new");
            }
            // the first connection was never dropped and still works on its old session
            assertThat(peerName(old)).isEqualTo("CN=first");
            assertThat(echo(old, "still here")).isEqualTo("still here");
        }
    }

    @Test
    void aKeyThatDoesNotMatchOrABrokenFileKeepsTheCurrentCertificateWithOneWarning() throws Exception {
        Path[] first = certificate("first", "first");
        Path[] other = certificate("other", "other");
        Path crt = dir.resolve("server.crt");
        Path key = dir.resolve("server.key");
        replace(first[0], crt);
        replace(first[1], key);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        Logger logger = (Logger) LoggerFactory.getLogger(ReloadingSslContext.class);
        logs.start();
        logger.addAppender(logs);
        try {
            int port = startServer(TlsConfig.defaults().withFiles(crt.toString(), key.toString()).withPollInterval(POLL));
            String firstKey = Files.readString(first[1]);
            String otherKey = Files.readString(other[1]);

            replace(other[0], crt); // a certificate whose key never arrives
            await("a warning", () -> snapshot(logs).stream().anyMatch(e -> e.getLevel() == Level.WARN));
            Thread.sleep(POLL.toMillis() * 5);
            List<String> warnings = snapshot(logs).stream().filter(e -> e.getLevel() == Level.WARN)
                    .map(ILoggingEvent::getFormattedMessage).toList();
            assertThat(warnings).singleElement().asString().contains("does not belong to the certificate")
                    .contains("still serving the certificate loaded before (CN=first)");
            try (SSLSocket s = connect(port)) {
                assertThat(peerName(s)).isEqualTo("CN=first");
            }

            Files.writeString(key, "-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n");
            await("a second warning", () -> snapshot(logs).stream().filter(e -> e.getLevel() == Level.WARN).count() == 2);
            try (SSLSocket s = connect(port)) {
                assertThat(peerName(s)).isEqualTo("CN=first");
            }
            assertThat(tls.generation()).isEqualTo(1);
            for (ILoggingEvent e : snapshot(logs)) {
                String line = e.getFormattedMessage() + (e.getThrowableProxy() == null ? "" : e.getThrowableProxy().getMessage());
                for (String pem : List.of(firstKey, otherKey)) {
                    String body = pem.lines().filter(l -> !l.startsWith("-----")).findFirst().orElseThrow();
                    assertThat(line).doesNotContain(body);
                }
            }
        } finally {
            logger.detachAppender(logs);
        }
    }

    @Test
    void theConfiguredProtocolsAreTheOnlyOnesOffered() throws Exception {
        Path[] first = certificate("first", "first");
        int port = startServer(TlsConfig.defaults().withFiles(first[0].toString(), first[1].toString())
                .withProtocols(List.of("TLSv1.2")).withPollInterval(POLL));
        try (SSLSocket s = connect(port)) {
            assertThat(s.getSession().getProtocol()).isEqualTo("TLSv1.2");
            assertThat(echo(s, "ok")).isEqualTo("ok");
        }
        assertThatThrownBy(() -> connect(port, "TLSv1.3").close()).isInstanceOf(IOException.class);
    }

    @Test
    void filesThatMakeNoContextAtStartAreAnErrorAndBadSettingsNameTheirKey() throws Exception {
        Path[] first = certificate("first", "first");
        Path[] other = certificate("other", "other");
        assertThatThrownBy(() -> ReloadingSslContext.start(TlsConfig.defaults()
                .withFiles(first[0].toString(), other[1].toString()))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("does not belong to the certificate");
        assertThatThrownBy(() -> ReloadingSslContext.start(TlsConfig.defaults()
                .withFiles(dir.resolve("none.crt").toString(), first[1].toString()))).hasMessageContaining("cannot read");
        assertThatThrownBy(() -> TlsConfig.defaults().withProtocols(List.of("TLSv1.1")))
                .isInstanceOf(ConfigException.class).hasMessage("tls.protocols: TLSv1.1 (expected: TLSv1.3 and/or TLSv1.2)");
        assertThatThrownBy(() -> new TlsConfig("a.crt", null, TlsConfig.DEFAULT_PROTOCOLS, TlsConfig.DEFAULT_POLL_INTERVAL))
                .hasMessage("tls.keyFile: null (expected: tls.certFile and tls.keyFile set together)");
        assertThat(TlsConfig.defaults().enabled()).isFalse();
    }

    /** The events so far, copied under the appender's lock: the reloader's thread appends meanwhile. */
    private static List<ILoggingEvent> snapshot(ListAppender<ILoggingEvent> logs) {
        synchronized (logs) {
            return new java.util.ArrayList<>(logs.list);
        }
    }
}
