package io.pushd.server.tls;

import io.pushd.server.config.ConfigException;
import io.pushd.server.config.Durations;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * {@code tls.*}: TLS on the daemon itself, for deployments without a TLS-terminating balancer.
 *
 * @param certFile     PEM certificate chain, leaf first; null: plain TCP
 * @param keyFile      PEM private key of the leaf (PKCS#8 {@code BEGIN PRIVATE KEY}; the OpenSSL
 *                     provider also reads PKCS#1/SEC1), unencrypted
 * @param protocols    enabled protocol versions
 * @param pollInterval how often both files are checked for a renewal
 */
public record TlsConfig(String certFile, String keyFile, List<String> protocols, Duration pollInterval) {

    public static final List<String> DEFAULT_PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");
    /** A renewal (certbot, cert-manager) is picked up within seconds; a stat() of two files costs nothing. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(5);
    private static final Set<String> ALLOWED = Set.of("TLSv1.3", "TLSv1.2");

    public TlsConfig {
        require((certFile == null) == (keyFile == null), certFile == null ? "tls.certFile" : "tls.keyFile", null,
                "tls.certFile and tls.keyFile set together");
        require(certFile == null || !certFile.isBlank(), "tls.certFile", certFile, "a PEM file path");
        require(keyFile == null || !keyFile.isBlank(), "tls.keyFile", keyFile, "a PEM file path");
        require(protocols != null && !protocols.isEmpty(), "tls.protocols", protocols, "TLSv1.3 and/or TLSv1.2");
        protocols = List.copyOf(protocols);
        for (String p : protocols) {
            // TLS 1.0 and 1.1 are deprecated by RFC 8996
            require(ALLOWED.contains(p), "tls.protocols", p, "TLSv1.3 and/or TLSv1.2");
        }
        require(pollInterval != null && pollInterval.toMillis() >= 100, "tls.pollInterval", pollInterval, ">= 100ms");
    }

    public static TlsConfig defaults() {
        return new TlsConfig(null, null, DEFAULT_PROTOCOLS, DEFAULT_POLL_INTERVAL);
    }

    public boolean enabled() {
        return certFile != null;
    }

    public TlsConfig withFiles(String cert, String key) {
        return new TlsConfig(cert, key, protocols, pollInterval);
    }

    public TlsConfig withProtocols(List<String> p) {
        return new TlsConfig(certFile, keyFile, p, pollInterval);
    }

    public TlsConfig withPollInterval(Duration d) {
        return new TlsConfig(certFile, keyFile, protocols, d);
    }

    private static void require(boolean ok, String key, Object value, String expected) {
        if (!ok) {
            Object shown = value instanceof Duration d ? Durations.format(d) : value;
            throw new ConfigException(key + ": " + shown + " (expected: " + expected + ")");
        }
    }
}
