package io.pushd.loadtest.report;

import java.util.Locale;

/**
 * One measured value, written once and rendered three ways: under {@code key} in report.json (as
 * {@code value}), and as {@code shown} in report.html's table and on stdout.
 *
 * @param key   report.json key, or null: shown only (a row's label)
 * @param value what report.json holds (raw units, e.g. milliseconds)
 * @param shown what the table and stdout show (rounded, other units), or null: report.json only
 */
public record Figure(String key, Object value, Object shown) {

    /** Shown as it is stored. */
    public static Figure of(String key, Object value) {
        return new Figure(key, value, value);
    }

    /** Shown formatted with {@code format} ({@link String#format}, root locale). */
    public static Figure fmt(String key, Object value, String format) {
        return new Figure(key, value, String.format(Locale.ROOT, format, value));
    }

    /** Stored as {@code value}, shown as {@code shown} (e.g. milliseconds stored, seconds shown). */
    public static Figure shown(String key, Object value, Object shown) {
        return new Figure(key, value, shown);
    }

    /** In report.json only. */
    public static Figure json(String key, Object value) {
        return new Figure(key, value, null);
    }

    /** A label: shown only. */
    public static Figure label(Object shown) {
        return new Figure(null, null, shown);
    }

    /** Milliseconds stored, seconds shown with two decimals. */
    public static Figure seconds(String key, double millis) {
        return new Figure(key, millis, round(millis / 1000, 100));
    }

    /** {@code v} rounded to one decimal (what tables show of a rate). */
    public static double round1(double v) {
        return round(v, 10);
    }

    private static double round(double v, double scale) {
        return Math.round(v * scale) / scale;
    }
}
