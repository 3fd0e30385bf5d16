package io.pushd.server.auth;

import java.nio.charset.StandardCharsets;

/**
 * Finds the token of a request: an {@code Authorization: Bearer} header (publishers, SSE and
 * WebSocket clients that can set headers) or an {@code access_token} query parameter (browsers,
 * whose {@code WebSocket} and {@code EventSource} cannot). Following RFC 6750 section 2, a request
 * that uses both, or names {@code access_token} twice, is malformed rather than guessed at.
 */
public final class TokenCarrier {

    /** The query parameter browsers use. */
    public static final String QUERY_PARAMETER = "access_token";

    /**
     * Far above any sane JWT (a few hundred bytes to 2 KiB), low enough that nobody makes the
     * server base64-decode megabytes per upgrade.
     */
    public static final int MAX_TOKEN_LENGTH = 8 * 1024;

    /** What {@link #extract} found: a {@link BearerToken} or a {@link Denial} (missing or malformed). */
    public sealed interface Extraction permits BearerToken, Denial {
    }

    private TokenCarrier() {
    }

    /**
     * @param authorization the {@code Authorization} header value, or null
     * @param uri           the request target ({@code /v1/live?topic=a&access_token=…}), or null
     */
    public static Extraction extract(String authorization, String uri) {
        String fromQuery;
        try {
            fromQuery = fromQuery(uri);
        } catch (IllegalArgumentException e) {
            return new Denial(DenialReason.MALFORMED);
        }
        if (authorization != null) {
            if (fromQuery != null) {
                return new Denial(DenialReason.MALFORMED);
            }
            return fromHeader(authorization);
        }
        if (fromQuery == null) {
            return new Denial(DenialReason.MISSING);
        }
        return checked(fromQuery);
    }

    private static Extraction fromHeader(String authorization) {
        String h = authorization.strip();
        int space = h.indexOf(' ');
        // the scheme is case-insensitive (RFC 7235 section 2.1); another scheme is no bearer token
        if (space < 0 || !h.substring(0, space).equalsIgnoreCase("Bearer")) {
            return new Denial(h.isEmpty() ? DenialReason.MISSING : DenialReason.MALFORMED);
        }
        return checked(h.substring(space + 1).strip());
    }

    private static Extraction checked(String token) {
        if (token.isEmpty() || token.length() > MAX_TOKEN_LENGTH || !b64token(token)) {
            return new Denial(DenialReason.MALFORMED);
        }
        return new BearerToken(token);
    }

    /** RFC 6750's b64token: {@code 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="}. */
    private static boolean b64token(String s) {
        int i = 0;
        int n = s.length();
        for (; i < n; i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
            if (!ok) {
                break;
            }
        }
        if (i == 0) {
            return false;
        }
        for (; i < n; i++) {
            if (s.charAt(i) != '=') {
                return false;
            }
        }
        return true;
    }

    /** The one {@code access_token} value, null when absent; throws when repeated or badly encoded. */
    private static String fromQuery(String uri) {
        if (uri == null) {
            return null;
        }
        String found = null;
        for (Redaction.Param p : Redaction.params(uri)) {
            if (p.isAccessToken()) {
                if (found != null) {
                    throw new IllegalArgumentException("access_token twice");
                }
                found = decode(p.rawValue());
            }
        }
        return found;
    }

    /** Percent-decoding, and '+' as space as forms do (a space then fails the b64token check). */
    static String decode(String s) {
        if (s.indexOf('%') < 0 && s.indexOf('+') < 0) {
            return s;
        }
        byte[] out = new byte[s.length()];
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '+') {
                out[n++] = ' ';
            } else if (c == '%') {
                if (i + 2 >= s.length()) {
                    throw new IllegalArgumentException("bad percent-encoding");
                }
                int hi = Character.digit(s.charAt(i + 1), 16);
                int lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw new IllegalArgumentException("bad percent-encoding");
                }
                out[n++] = (byte) (hi << 4 | lo);
                i += 2;
            } else if (c < 0x80) {
                out[n++] = (byte) c;
            } else {
                return s; // not ASCII: leave as is, b64token refuses it
            }
        }
        return new String(out, 0, n, StandardCharsets.UTF_8);
    }
}
