package io.pushd.server.auth;

import java.util.Objects;

/**
 * One entry of a token's {@code topics} or {@code publish} claim.
 *
 * <ul>
 *   <li>{@code orders}: exactly the topic {@code orders};</li>
 *   <li>{@code orders.*}: every topic that starts with {@code orders.} and has at least one more
 *       character ({@code orders.eu}, {@code orders.eu.1}), but neither {@code orders} itself nor
 *       {@code ordersX};</li>
 *   <li>{@code *}: every topic.</li>
 * </ul>
 *
 * A name or prefix uses the topic-name characters {@code [A-Za-z0-9_.:-]}; {@code *} is allowed
 * only alone or as the final {@code .*}, so {@code ord*}, {@code *.eu} or {@code a.*.b} are
 * refused rather than given a meaning a token issuer might not expect.
 */
public final class TopicPattern {

    /** Same bound as a topic name (protocol/README.md), plus the two characters of {@code .*}. */
    static final int MAX_LENGTH = 202;

    private static final TopicPattern ANY = new TopicPattern("*", null, true);

    private final String text;
    /** The exact name, or the prefix including its final dot; null for {@code *}. */
    private final String value;
    private final boolean prefix;

    private TopicPattern(String text, String value, boolean prefix) {
        this.text = text;
        this.value = value;
        this.prefix = prefix;
    }

    /** @throws IllegalArgumentException if {@code text} is not a valid pattern (the message quotes it) */
    public static TopicPattern parse(String text) {
        Objects.requireNonNull(text, "text");
        if (text.equals("*")) {
            return ANY;
        }
        if (text.isEmpty() || text.length() > MAX_LENGTH) {
            throw invalid(text);
        }
        boolean prefix = text.endsWith(".*");
        String name = prefix ? text.substring(0, text.length() - 1) : text; // keeps the dot
        String checked = prefix ? name.substring(0, name.length() - 1) : name;
        if (checked.isEmpty() || checked.length() > 200 || !validChars(checked)) {
            throw invalid(text);
        }
        return new TopicPattern(text, name, prefix);
    }

    private static boolean validChars(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '_' || c == '.' || c == ':' || c == '-';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static IllegalArgumentException invalid(String text) {
        // a claim value is not a secret, but it is attacker-controlled: bound what we echo
        String shown = text.length() > 64 ? text.substring(0, 64) + "…" : text;
        return new IllegalArgumentException("topic pattern: " + shown
                + " (expected: a topic name, a prefix ending in .* or * alone)");
    }

    public boolean matches(String topic) {
        if (value == null) {
            return true;
        }
        if (!prefix) {
            return value.equals(topic);
        }
        return topic.length() > value.length() && topic.startsWith(value);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TopicPattern p && p.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** The pattern as written in the claim. */
    @Override
    public String toString() {
        return text;
    }
}
