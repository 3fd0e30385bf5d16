package io.pushd.protocol;

/** A message or request that breaks protocol v1. {@link #code()} is the wire error code. */
public final class ProtocolException extends RuntimeException {

    private final String code;

    public ProtocolException(String code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    public String code() {
        return code;
    }
}
