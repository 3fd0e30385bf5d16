package io.pushd.server.auth;

import io.pushd.protocol.ErrorCodes;
import java.net.InetAddress;
import java.time.Clock;
import java.util.Collection;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every access decision of the server, for every transport: who may subscribe (the WebSocket and
 * SSE gates call {@link #subscribe} before their upgrade, a {@code Session} calls
 * {@link Grant#maySubscribe} for in-band subscribes and {@link #refresh} for an in-band
 * {@code auth}), and who may publish ({@link #publish}). Every refusal is counted once, by reason,
 * through {@code onDenied}: the {@link DenialReason#code()} of a token refused, or
 * {@code topic_not_allowed} / {@code publish_not_allowed}.
 *
 * <p>Mode none: no token is read; subscribing is open, publishing only from
 * {@code security.publishAllowedFrom}. Mode jwt: a verified token decides. Thread-safe; meant to
 * run on event loops (verification is local and in memory).
 */
public final class AccessControl implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AccessControl.class);
    /** The metric tag of a subscribe outside {@code topics}. */
    public static final String TOPIC_NOT_ALLOWED = ErrorCodes.TOPIC_NOT_ALLOWED;
    /** The metric tag of a publish outside {@code publish}, or from an address not allowed. */
    public static final String PUBLISH_NOT_ALLOWED = ErrorCodes.PUBLISH_NOT_ALLOWED;

    private static final Grant ANONYMOUS_SUBSCRIBER = Grant.anonymous(false);
    private static final Grant ANONYMOUS_PUBLISHER = Grant.anonymous(true);

    private final AuthConfig.Mode mode;
    private final AddressBlocks publishAllowList;
    private final KeySource keys;
    private final TokenVerifier verifier;
    private final Consumer<String> onDenied;

    private AccessControl(AuthConfig config, KeySource keys, TokenVerifier verifier, Consumer<String> onDenied) {
        this.mode = config.mode();
        this.publishAllowList = config.publishAllowList();
        this.keys = keys;
        this.verifier = verifier;
        this.onDenied = onDenied;
    }

    /**
     * Loads the keys (mode jwt: the JWK set file now, the URL on its own thread). Call at
     * start-up, off the event loops.
     *
     * @throws io.pushd.server.config.ConfigException when the JWK set file cannot be loaded
     */
    public static AccessControl start(AuthConfig config, Clock clock, Consumer<String> onDenied) {
        if (config.mode() == AuthConfig.Mode.NONE) {
            return new AccessControl(config, null, null, onDenied);
        }
        KeySource keys = KeySource.start(config.jwt());
        log.info("auth: mode jwt, {} key(s) loaded{}{}", keys.current().entries().size(),
                config.jwt().issuer() == null ? "" : ", issuer " + config.jwt().issuer(),
                config.jwt().audience() == null ? "" : ", audience " + config.jwt().audience());
        return new AccessControl(config, keys, new TokenVerifier(config.jwt(), keys, clock), onDenied);
    }

    /** For tests and embedding: mode jwt over a fixed key set. */
    static AccessControl fixed(AuthConfig config, KeySet keys, Clock clock, Consumer<String> onDenied) {
        KeySource source = KeySource.fixed(keys);
        return new AccessControl(config, source, new TokenVerifier(config.jwt(), source, clock), onDenied);
    }

    public boolean tokensRequired() {
        return mode == AuthConfig.Mode.JWT;
    }

    /**
     * Before a subscription transport starts (WebSocket upgrade, SSE): the token of the request
     * and the topics of its query.
     *
     * @param authorization the {@code Authorization} header, or null
     * @param uri           the request target (its {@code access_token} parameter is a carrier)
     * @param topics        the topics the query names (may be empty)
     */
    public AccessDecision subscribe(String authorization, String uri, Collection<String> topics) {
        if (mode == AuthConfig.Mode.NONE) {
            return AccessDecision.allow(ANONYMOUS_SUBSCRIBER);
        }
        AccessDecision token = authenticate(authorization, uri);
        if (!token.allowed()) {
            return token;
        }
        for (String t : topics) {
            if (!token.grant().maySubscribe(t)) {
                return forbidden(TOPIC_NOT_ALLOWED, "topic '" + shorten(t) + "' is not in the token's topics");
            }
        }
        return token;
    }

    /**
     * An in-band subscribe of a running session (WebSocket frame; SSE has none): whether its
     * grant covers {@code topic}. A refusal is counted; the caller answers it with a
     * {@code topic_not_allowed} error frame.
     */
    public boolean maySubscribe(Grant grant, String topic) {
        if (grant.maySubscribe(topic)) {
            return true;
        }
        onDenied.accept(TOPIC_NOT_ALLOWED);
        return false;
    }

    /**
     * A publish to {@code topic}.
     *
     * @param client the address the request comes from (resolved through trusted proxies); mode
     *               none only, null when it is not an IP address
     */
    public AccessDecision publish(String authorization, String uri, String topic, InetAddress client) {
        if (mode == AuthConfig.Mode.NONE) {
            if (client != null && publishAllowList.contains(client)) {
                return AccessDecision.allow(ANONYMOUS_PUBLISHER);
            }
            return forbidden(PUBLISH_NOT_ALLOWED,
                    "publishing is allowed only from security.publishAllowedFrom (auth.mode is none)");
        }
        AccessDecision token = authenticate(authorization, uri);
        if (!token.allowed()) {
            return token;
        }
        if (!token.grant().mayPublish(topic)) {
            return forbidden(PUBLISH_NOT_ALLOWED, "topic '" + shorten(topic) + "' is not in the token's publish");
        }
        return token;
    }

    /**
     * An in-band {@code auth}: the new token must verify and name {@code subject}. Returns the new
     * grant, or the refusal (counted) whose message an {@code invalid_token} error frame carries.
     */
    public AccessDecision refresh(String token, String subject) {
        if (mode == AuthConfig.Mode.NONE) {
            return new AccessDecision(null, 400, ErrorCodes.BAD_MESSAGE, "auth.mode is none: there is no token to refresh",
                    null, null);
        }
        BearerToken bearer;
        try {
            bearer = BearerToken.of(token);
        } catch (IllegalArgumentException e) {
            return unauthorized(DenialReason.MALFORMED);
        }
        AuthResult r = verifier.verify(bearer);
        if (r instanceof Denial d) {
            return unauthorized(d.reason());
        }
        Grant g = (Grant) r;
        if (!g.subject().equals(subject)) {
            onDenied.accept(DenialReason.BAD_CLAIMS.code());
            return new AccessDecision(null, 401, ErrorCodes.INVALID_TOKEN, "the new token names another sub", null,
                    DenialReason.BAD_CLAIMS.code());
        }
        return AccessDecision.allow(g);
    }

    private AccessDecision authenticate(String authorization, String uri) {
        TokenCarrier.Extraction found = TokenCarrier.extract(authorization, uri);
        if (found instanceof Denial d) {
            return unauthorized(d.reason());
        }
        AuthResult r = verifier.verify((BearerToken) found);
        if (r instanceof Denial d) {
            return unauthorized(d.reason());
        }
        return AccessDecision.allow((Grant) r);
    }

    private AccessDecision unauthorized(DenialReason reason) {
        onDenied.accept(reason.code());
        if (reason == DenialReason.MISSING) {
            return new AccessDecision(null, 401, ErrorCodes.MISSING_TOKEN, "a bearer token is required", "Bearer",
                    reason.code());
        }
        return new AccessDecision(null, 401, ErrorCodes.INVALID_TOKEN, reason.message(),
                "Bearer error=\"invalid_token\"", reason.code());
    }

    private AccessDecision forbidden(String code, String message) {
        onDenied.accept(code);
        return new AccessDecision(null, 403, code, message, null, code);
    }

    private static String shorten(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }

    @Override
    public void close() {
        if (keys != null) {
            keys.close();
        }
    }

    /** Mode none beyond loopback: anyone who reaches the port subscribes to every topic (one WARN at start). */
    public static void warnIfOpen(AuthConfig.Mode mode, String host, java.util.List<String> publishAllowedFrom) {
        if (mode != AuthConfig.Mode.NONE || isLoopback(host)) {
            return;
        }
        log.warn("auth.mode is none and the server listens on {} (beyond loopback): anyone who reaches it may "
                + "subscribe to every topic and replay its history; publishing is allowed only from {}. "
                + "Set auth.mode: jwt (see the README's Access control section) or server.host: 127.0.0.1",
                host, publishAllowedFrom);
    }

    private static boolean isLoopback(String host) {
        if (host.equals("localhost")) {
            return true;
        }
        byte[] addr = io.netty.util.NetUtil.createByteArrayFromIpAddressString(host);
        try {
            return addr != null && InetAddress.getByAddress(addr).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }
}
