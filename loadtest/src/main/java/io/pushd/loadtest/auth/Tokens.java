package io.pushd.loadtest.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.OctetSequenceKeyGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.pushd.loadtest.fleet.ClientFleet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.Date;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys and tokens of one run ({@code --token}): a fresh key (never reused, never shown), a
 * JWK set for the server in a private temp directory that {@link #close} deletes, and tokens
 * signed with the key. Every client gets its own {@code sub} ({@code lt-client-N}) whose
 * {@code topics} name its one topic, the publisher one whose {@code publish} names the run's
 * topics: the server verifies a distinct token on every handshake, as with a real fleet.
 *
 * <p>No method returns key material, and a token is only ever handed to a client or the
 * publisher: {@link #describe} is what the report and the summary show.
 */
public final class Tokens implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Tokens.class);

    private final TokenMode mode;
    private final JWSSigner signer;
    private final JWSAlgorithm alg;
    private final String kid;
    private final Path dir;
    private final Path jwksFile;
    private final Instant expiry;

    private Tokens(TokenMode mode, JWSSigner signer, JWSAlgorithm alg, String kid, Path dir, Path jwksFile,
                   Instant expiry) {
        this.mode = mode;
        this.signer = signer;
        this.alg = alg;
        this.kid = kid;
        this.dir = dir;
        this.jwksFile = jwksFile;
        this.expiry = expiry;
    }

    /**
     * Generates the key and writes the server's JWK set (nothing for {@link TokenMode#none}).
     *
     * @param lifetime how long the tokens are valid: well beyond the run, so no session expires (4001) in it
     */
    public static Tokens create(TokenMode mode, Duration lifetime) throws IOException {
        Instant expiry = Instant.now().plus(lifetime);
        if (mode == TokenMode.none) {
            return new Tokens(mode, null, null, null, null, null, expiry);
        }
        String kid = "loadtest-" + Long.toHexString(System.nanoTime());
        try {
            JWK serverKey;
            JWSSigner signer;
            JWSAlgorithm alg;
            if (mode == TokenMode.hs256) {
                alg = JWSAlgorithm.HS256;
                OctetSequenceKey secret = new OctetSequenceKeyGenerator(256).keyID(kid).algorithm(alg)
                        .keyUse(KeyUse.SIGNATURE).generate();
                signer = new MACSigner(secret);
                serverKey = secret; // a shared secret: the server needs the same bytes
            } else {
                alg = JWSAlgorithm.RS256;
                RSAKey pair = new RSAKeyGenerator(2048).keyID(kid).algorithm(alg).keyUse(KeyUse.SIGNATURE).generate();
                signer = new RSASSASigner(pair);
                serverKey = pair.toPublicJWK(); // the private half stays in this JVM
            }
            Path dir = privateTempDir();
            Path file = dir.resolve("jwks.json");
            // false: keep the oct secret's "k" (it counts as private); an RSA set holds the public key only
            Files.writeString(file, new JWKSet(serverKey).toString(false), StandardCharsets.UTF_8);
            return new Tokens(mode, signer, alg, kid, dir, file, expiry);
        } catch (JOSEException e) {
            throw new IllegalStateException("could not generate the " + mode + " key: " + e.getMessage(), e);
        }
    }

    public TokenMode mode() {
        return mode;
    }

    public boolean enabled() {
        return mode != TokenMode.none;
    }

    /** The child server's settings ({@code --set}) for this mode; empty for none. */
    public List<String> serverSets() {
        return enabled() ? List.of("auth.mode=jwt", "auth.jwt.jwksFile=" + jwksFile) : List.of();
    }

    /** What the report shows: the mode, the algorithm and the key id; never key material or a token. */
    public String describe() {
        return switch (mode) {
            case none -> "none (server auth.mode none)";
            case hs256 -> "hs256: HS256, fresh 256-bit secret (kid " + kid + "), one sub per client, "
                    + "server auth.mode jwt";
            case rs256 -> "rs256: RS256, fresh RSA 2048 key pair (kid " + kid + "), one sub per client, "
                    + "server auth.mode jwt";
        };
    }

    /**
     * One token per client, client {@code i} following {@code topics.get(i % topics.size())} (as
     * {@link ClientFleet} assigns them); all null for none.
     */
    public String[] forClients(int clients, List<String> topics) {
        String[] out = new String[clients];
        if (enabled()) {
            for (int i = 0; i < clients; i++) {
                out[i] = sign("lt-client-" + i, List.of(topics.get(i % topics.size())), null);
            }
        }
        return out;
    }

    /**
     * The publisher's token: {@code publish} covers {@code topics}, and so does {@code topics}, since
     * the same API reads their heads ({@code GET /v1/topics/{topic}} needs the topic in
     * {@code topics}); null for none.
     */
    public String forPublisher(List<String> topics) {
        return enabled() ? sign("lt-publisher", topics, topics) : null;
    }

    /** A fleet customizer giving client {@code i} the token {@code tokens[i]} (none: unchanged). */
    public static ClientFleet.Customizer clientTokens(String[] tokens) {
        return (i, b) -> {
            String t = tokens[i];
            return t == null ? b : b.accessToken(() -> t);
        };
    }

    private String sign(String sub, List<String> topics, List<String> publish) {
        JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder().subject(sub).issueTime(new Date())
                .expirationTime(Date.from(expiry));
        if (topics != null) {
            claims.claim("topics", topics);
        }
        if (publish != null) {
            claims.claim("publish", publish);
        }
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).keyID(kid).build(), claims.build());
        try {
            jwt.sign(signer);
        } catch (JOSEException e) {
            throw new IllegalStateException("could not sign a " + mode + " token: " + e.getMessage(), e);
        }
        return jwt.serialize();
    }

    private static Path privateTempDir() throws IOException {
        if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
            return Files.createTempDirectory("push-loadtest-keys-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        return Files.createTempDirectory("push-loadtest-keys-");
    }

    /** Deletes the JWK set and its directory. */
    @Override
    public void close() {
        if (dir == null) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            log.warn("could not delete {}: {}", dir, e.toString());
        }
    }
}
