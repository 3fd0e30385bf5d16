package io.pushd.server.auth;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.JWK;
import java.time.Clock;
import java.time.Instant;

/**
 * Verifications per second on one thread, per algorithm: a plain loop, not JMH, so the figures
 * are rough (warm-up included, no fork control). Prints only; run it with
 * {@code java -cp <test classpath> io.pushd.server.auth.VerifierThroughput [seconds]}.
 */
public final class VerifierThroughput {

    private VerifierThroughput() {
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        var hmac = TestKeys.hmac("h");
        var rsa = TestKeys.rsa("r");
        var ec = TestKeys.ec("e");
        var ed = TestKeys.ed25519("d");
        KeySet keys = TestKeys.keySet(hmac, rsa, ec, ed.publicJwk());
        TokenVerifier v = new TokenVerifier(AuthConfig.Jwt.defaults(), () -> keys, () -> { }, Clock.systemUTC());
        var claims = TestKeys.claims(Instant.now()).build();
        // two passes, the first one only warms the JIT on every path
        for (boolean print : new boolean[] {false, true}) {
            double s = print ? seconds : seconds / 4;
            run(v, "HS256", TestKeys.sign(hmac, JWSAlgorithm.HS256, claims), s, print);
            run(v, "HS256 (no kid, 1 oct key)", TestKeys.sign(hmac, JWSAlgorithm.HS256, claims, null), s, print);
            run(v, "RS256 (2048)", TestKeys.sign(rsa, JWSAlgorithm.RS256, claims), s, print);
            run(v, "PS256 (2048)", TestKeys.sign(rsa, JWSAlgorithm.PS256, claims), s, print);
            run(v, "ES256", TestKeys.sign(ec, JWSAlgorithm.ES256, claims), s, print);
            run(v, "EdDSA (Ed25519)", TestKeys.signEd(ed, JWSAlgorithm.EdDSA, claims), s, print);
            run(v, "bad signature HS256", TestKeys.sign(TestKeys.hmac("h"), JWSAlgorithm.HS256, claims), s, print);
        }
    }

    private static void run(TokenVerifier v, String name, String token, double seconds, boolean print) {
        BearerToken t = BearerToken.of(token);
        long warmEnd = System.nanoTime() + (long) (seconds * 0.5e9);
        while (System.nanoTime() < warmEnd) {
            v.verify(t);
        }
        long n = 0;
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        Object sink = null;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 16; i++) {
                sink = v.verify(t);
            }
            n += 16;
        }
        double perSecond = n / ((System.nanoTime() - start) / 1e9);
        if (!print) {
            return;
        }
        System.out.printf("%-28s %,10.0f verifications/s on one thread (%s)%n", name, perSecond,
                sink instanceof Grant ? "granted" : sink);
    }
}
