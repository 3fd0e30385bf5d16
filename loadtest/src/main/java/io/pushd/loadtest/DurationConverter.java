package io.pushd.loadtest;

import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Reads {@code 500ms}, {@code 5s}, {@code 2m}, or a plain number of seconds, like the server's config. */
public final class DurationConverter implements ITypeConverter<Duration> {

    @Override
    public Duration convert(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        try {
            if (v.endsWith("ms")) {
                return positive(Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2))), value);
            }
            if (v.endsWith("s")) {
                return positive(Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000)),
                        value);
            }
            if (v.endsWith("m")) {
                return positive(Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)) * 60), value);
            }
            return positive(Duration.ofMillis(Math.round(Double.parseDouble(v) * 1000)), value);
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + value + "' is not a duration (e.g. 500ms, 5s, 2m)");
        }
    }

    private static Duration positive(Duration d, String value) {
        if (d.isNegative() || d.isZero()) {
            throw new TypeConversionException("'" + value + "' must be a positive duration");
        }
        return d;
    }
}
