package io.pushd.server.auth;

import java.util.Objects;

/**
 * A token as carried by a request. The value is only read by {@link TokenVerifier};
 * {@link #toString()} never shows it, so a token passed to a logger or put into an exception
 * message by mistake prints as {@code BearerToken[redacted]}.
 */
public final class BearerToken implements TokenCarrier.Extraction {

    private final String value;

    BearerToken(String value) {
        this.value = Objects.requireNonNull(value, "value");
    }

    /** For code that receives a token in band ({@code {"type":"auth","token":…}}) or in tests. */
    public static BearerToken of(String value) {
        return new BearerToken(value);
    }

    String value() {
        return value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BearerToken t && t.value.equals(value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    @Override
    public String toString() {
        return "BearerToken[redacted]";
    }
}
