package io.pushd.server.tls;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.Mapping;
import io.pushd.server.config.ConfigException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's TLS context, rebuilt when {@code tls.certFile} or {@code tls.keyFile} change.
 * Every new connection asks for the context at accept time ({@link #newHandler} in the channel
 * initializer, or {@link #mapping()} behind Netty's {@code SniHandler}), so a renewed
 * certificate serves the next handshake while connections already open keep theirs: no
 * restart, nothing dropped.
 *
 * <p>The OpenSSL provider (netty-tcnative) when {@link OpenSsl#isAvailable()}, else the JDK's.
 * A daemon thread polls both files; a change is read once both have stayed the same for one
 * poll (renewal tools write the two files one after the other), and a new pair is used only if
 * it builds and the key signs something the certificate's public key verifies. A pair that fails
 * keeps the current context and logs one WARN; no message ever includes key material.
 */
public final class ReloadingSslContext implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReloadingSslContext.class);

    private static final Pattern PKCS8 = Pattern.compile(
            "-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

    private final Path certFile;
    private final Path keyFile;
    private final List<String> protocols;
    private final SslProvider provider;
    private final ScheduledExecutorService poller;
    private final AtomicLong generation = new AtomicLong();

    private volatile SslContext current;
    private volatile X509Certificate leaf;

    // poller thread only
    private List<Object> loaded;
    private List<Object> pending;
    private Object warned;

    private ReloadingSslContext(TlsConfig config) {
        this.certFile = Path.of(config.certFile());
        this.keyFile = Path.of(config.keyFile());
        this.protocols = config.protocols();
        this.provider = OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
        this.poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "push-tls-reload");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Builds the context now and keeps it fresh.
     *
     * @throws ConfigException when the files do not make a usable context at start
     */
    public static ReloadingSslContext start(TlsConfig config) {
        if (!config.enabled()) {
            throw new IllegalArgumentException("tls.certFile and tls.keyFile are not set");
        }
        ReloadingSslContext r = new ReloadingSslContext(config);
        String problem = r.poll(true);
        if (problem != null) {
            r.close();
            throw new ConfigException("tls: " + problem);
        }
        long every = config.pollInterval().toMillis();
        r.poller.scheduleWithFixedDelay(r::pollQuietly, every, every, TimeUnit.MILLISECONDS);
        return r;
    }

    /** The context for the next handshake. */
    public SslContext current() {
        return current;
    }

    /** A handler for a new connection, from the context current now. */
    public SslHandler newHandler(ByteBufAllocator alloc) {
        return current.newHandler(alloc);
    }

    /** For Netty's {@code SniHandler}: every host name (and none) gets the current context. */
    public Mapping<String, SslContext> mapping() {
        return host -> current;
    }

    /** Grows by one with each context installed (1 after start). */
    public long generation() {
        return generation.get();
    }

    /** The leaf certificate being served. */
    public X509Certificate certificate() {
        return leaf;
    }

    public SslProvider provider() {
        return provider;
    }

    private void pollQuietly() {
        try {
            poll(false);
        } catch (RuntimeException e) {
            log.warn("tls: reload check failed: {}", e.getClass().getSimpleName());
        }
    }

    /** One check of both files; the problem (safe to log) when a new pair could not be used. */
    String poll(boolean initial) {
        List<Object> now;
        try {
            now = List.of(fingerprint(certFile), fingerprint(keyFile));
        } catch (IOException e) {
            return problem(null, initial, "cannot read " + (Files.exists(certFile) ? keyFile : certFile) + " ("
                    + e.getClass().getSimpleName() + ")");
        }
        if (now.equals(loaded)) {
            pending = null;
            return null;
        }
        if (!initial && !now.equals(pending)) {
            pending = now;
            return null;
        }
        pending = null;
        loaded = now;
        byte[] cert = null;
        byte[] key = null;
        try {
            cert = Files.readAllBytes(certFile);
            key = Files.readAllBytes(keyFile);
            X509Certificate first = firstCertificate(cert);
            checkKeyMatches(key, first.getPublicKey());
            SslContext ctx = SslContextBuilder
                    .forServer(new ByteArrayInputStream(cert), new ByteArrayInputStream(key))
                    .sslProvider(provider)
                    .protocols(protocols)
                    .build();
            current = ctx;
            leaf = first;
            generation.incrementAndGet();
            warned = null;
            Instant notAfter = first.getNotAfter().toInstant();
            log.info("tls: {} certificate {} (serial {}), valid until {}, provider {}, protocols {}",
                    initial ? "loaded" : "reloaded", first.getSubjectX500Principal().getName(),
                    first.getSerialNumber().toString(16), notAfter, provider, protocols);
            if (notAfter.isBefore(Instant.now())) {
                log.warn("tls: certificate {} expired at {}", first.getSubjectX500Principal().getName(), notAfter);
            }
            return null;
        } catch (IOException e) {
            return problem(now, initial, "cannot read the files (" + e.getClass().getSimpleName() + ")");
        } catch (KeyMismatch e) {
            return problem(now, initial, "the key in " + keyFile + " does not belong to the certificate in " + certFile);
        } catch (GeneralSecurityException | RuntimeException e) {
            // Netty's and the JDK's messages are safe in practice, but a PEM parser quoting a line is not
            // worth the risk: name the class only
            return problem(now, initial, certFile + " and " + keyFile + " do not make a TLS context ("
                    + e.getClass().getSimpleName() + ")");
        } finally {
            if (key != null) {
                Arrays.fill(key, (byte) 0);
            }
        }
    }

    private String problem(List<Object> about, boolean initial, String problem) {
        Object k = about == null ? "unreadable" : about;
        if (!initial && !k.equals(warned)) {
            warned = k;
            log.warn("tls: {}; still serving the certificate loaded before{}", problem,
                    leaf == null ? "" : " (" + leaf.getSubjectX500Principal().getName() + ")");
        }
        return problem;
    }

    private static List<Object> fingerprint(Path p) throws IOException {
        BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
        return Arrays.asList(a.lastModifiedTime().to(TimeUnit.NANOSECONDS), a.size(), a.fileKey());
    }

    private static X509Certificate firstCertificate(byte[] pem) throws GeneralSecurityException {
        var certs = CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem));
        if (certs.isEmpty()) {
            throw new GeneralSecurityException("no certificate");
        }
        return (X509Certificate) certs.iterator().next();
    }

    private static final class KeyMismatch extends Exception {
        KeyMismatch() {
            super(null, null, false, false);
        }
    }

    /**
     * A renewal that has written the new certificate but not yet the new key would otherwise
     * build fine with the JDK provider and fail every handshake. Checked for PKCS#8 keys (what the
     * JDK provider reads); other encodings are left to the provider.
     */
    private static void checkKeyMatches(byte[] keyPem, PublicKey certKey) throws KeyMismatch, GeneralSecurityException {
        Matcher m = PKCS8.matcher(new String(keyPem, StandardCharsets.US_ASCII));
        if (!m.find()) {
            return;
        }
        byte[] der = Base64.getMimeDecoder().decode(m.group(1));
        String alg = certKey.getAlgorithm(); // RSA, EC, Ed25519/EdDSA
        PrivateKey key;
        try {
            key = KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
        } catch (GeneralSecurityException e) {
            throw new KeyMismatch(); // a key of another type than the certificate's
        } finally {
            Arrays.fill(der, (byte) 0);
        }
        String sigAlg = switch (alg) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> alg; // Ed25519, Ed448, EdDSA
        };
        byte[] probe = new byte[32];
        new SecureRandom().nextBytes(probe);
        Signature s = Signature.getInstance(sigAlg);
        s.initSign(key);
        s.update(probe);
        byte[] sig = s.sign();
        Signature v = Signature.getInstance(sigAlg);
        v.initVerify(certKey);
        v.update(probe);
        if (!v.verify(sig)) {
            throw new KeyMismatch();
        }
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }
}
