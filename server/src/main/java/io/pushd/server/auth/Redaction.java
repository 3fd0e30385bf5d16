package io.pushd.server.auth;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Makes a request target safe to log: the value of every {@code access_token} parameter (also
 * when its name is percent-encoded, {@code access%5Ftoken}, which a decoder would read as the
 * same parameter) becomes {@code REDACTED}, and a fragment is dropped. New code logs a target
 * only through {@link #uri(String)}.
 */
public final class Redaction {

    public static final String MASK = "REDACTED";

    /** The start of any compact JWS: a base64url JSON object ({@code {"} is {@code eyJ}) and a dot, encoded or not. */
    private static final Pattern JWT_LIKE = Pattern.compile("eyJ[A-Za-z0-9_-]{4,}(\\.|%2[eE])");

    private Redaction() {
    }

    /** One {@code name=value} of a query, as written (not decoded). */
    record Param(String rawName, String rawValue, boolean hasValue) {
        /** The parameter a decoder reads as {@code access_token}: the carrier itself. */
        boolean isAccessToken() {
            String name = decodedName();
            return name != null && name.equals(TokenCarrier.QUERY_PARAMETER);
        }

        /** Wider than {@link #isAccessToken()} (any case), for masking: a lenient parser elsewhere is covered too. */
        boolean mayBeAccessToken() {
            String name = decodedName();
            return name != null && name.toLowerCase(Locale.ROOT).equals(TokenCarrier.QUERY_PARAMETER);
        }

        private String decodedName() {
            try {
                return TokenCarrier.decode(rawName);
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
    }

    /**
     * The request target with each {@code access_token} value masked and any fragment removed;
     * the path and the other parameters are kept as written. Null stays null.
     */
    public static String uri(String uri) {
        if (uri == null) {
            return null;
        }
        int hash = uri.indexOf('#');
        String noFragment = hash < 0 ? uri : uri.substring(0, hash);
        int q = noFragment.indexOf('?');
        if (q < 0) {
            return noFragment;
        }
        StringBuilder out = new StringBuilder(noFragment.length()).append(noFragment, 0, q + 1);
        String query = noFragment.substring(q + 1);
        int start = 0;
        for (int i = 0; i <= query.length(); i++) {
            if (i == query.length() || isSeparator(query.charAt(i))) {
                String segment = query.substring(start, i);
                out.append(redactSegment(segment));
                if (i < query.length()) {
                    out.append(query.charAt(i));
                }
                start = i + 1;
            }
        }
        return out.toString();
    }

    /** A compact JWS anywhere in a text: its header, its payload and its signature, if any. */
    private static final Pattern JWT_IN_TEXT = Pattern.compile(
            "eyJ[A-Za-z0-9_-]{4,}(?:\\.|%2[eE])[A-Za-z0-9_-]*(?:(?:\\.|%2[eE])[A-Za-z0-9_-]*)?");

    /**
     * A message that quotes what a client sent (an error's "limit: '…'"), with anything that
     * looks like a token masked: a client that puts its token in the wrong place gets it back
     * nowhere, not in an answer a proxy may log.
     */
    public static String text(String message) {
        return message == null ? null : JWT_IN_TEXT.matcher(message).replaceAll(MASK);
    }

    /** The query string alone (what follows '?'), redacted the same way. */
    public static String query(String query) {
        if (query == null) {
            return null;
        }
        String r = uri("?" + query);
        return r.substring(1);
    }

    private static String redactSegment(String segment) {
        Param p = param(segment);
        if (p == null) {
            return segment;
        }
        // a JWT under another name (a client bug, "token=…") is masked as well
        boolean secret = p.mayBeAccessToken() || JWT_LIKE.matcher(p.rawValue()).find();
        return secret ? p.rawName() + "=" + MASK : segment;
    }

    /** Parameters of the query part of {@code uri}, split on '&' and ';' as Netty's decoder does by default. */
    static List<Param> params(String uri) {
        List<Param> out = new ArrayList<>();
        int hash = uri.indexOf('#');
        String noFragment = hash < 0 ? uri : uri.substring(0, hash);
        int q = noFragment.indexOf('?');
        if (q < 0) {
            return out;
        }
        String query = noFragment.substring(q + 1);
        int start = 0;
        for (int i = 0; i <= query.length(); i++) {
            if (i == query.length() || isSeparator(query.charAt(i))) {
                Param p = param(query.substring(start, i));
                if (p != null) {
                    out.add(p);
                }
                start = i + 1;
            }
        }
        return out;
    }

    private static Param param(String segment) {
        if (segment.isEmpty()) {
            return null;
        }
        int eq = segment.indexOf('=');
        return eq < 0 ? new Param(segment, "", false) : new Param(segment.substring(0, eq), segment.substring(eq + 1), true);
    }

    private static boolean isSeparator(char c) {
        return c == '&' || c == ';';
    }
}
