package io.pushd.server.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations in config files: {@code 250ms}, {@code 2s}, {@code 5m}, {@code 24h}, {@code 7d}, or ISO-8601. */
public final class Durations {

    private static final Pattern SIMPLE = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)");

    private Durations() {
    }

    /** Longer is a typo (and would overflow the nanoseconds timers count in). */
    public static final Duration MAX = Duration.ofDays(36_500);

    public static Duration parse(String text) {
        Duration d;
        try {
            d = parseUnbounded(text);
        } catch (ArithmeticException | java.time.format.DateTimeParseException e) {
            throw new IllegalArgumentException("'" + text + "' is not a duration (expected: e.g. 250ms, 2s, 5m, 24h,"
                    + " at most 36500d)");
        }
        if (d.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("'" + text + "' is longer than 36500d");
        }
        return d;
    }

    private static Duration parseUnbounded(String text) {
        String t = text.trim();
        Matcher m = SIMPLE.matcher(t);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            switch (m.group(2)) {
                case "ms": return Duration.ofMillis(n);
                case "s": return Duration.ofSeconds(n);
                case "m": return Duration.ofMinutes(n);
                case "h": return Duration.ofHours(n);
                default: return Duration.ofDays(n);
            }
        }
        if (t.startsWith("P") || t.startsWith("p")) {
            return Duration.parse(t);
        }
        throw new IllegalArgumentException("'" + text + "' is not a duration (expected: e.g. 250ms, 2s, 5m, 24h)");
    }

    /** The shortest exact form, e.g. {@code 24h} or {@code 1500ms}. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms != 0 && ms % 86_400_000L == 0) {
            return ms / 86_400_000L + "d";
        }
        if (ms != 0 && ms % 3_600_000L == 0) {
            return ms / 3_600_000L + "h";
        }
        if (ms != 0 && ms % 60_000L == 0) {
            return ms / 60_000L + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }
}
