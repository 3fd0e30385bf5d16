package io.pushd.server.auth;

import java.util.Objects;

/** A refused or absent token, with the reason to count and answer. */
public record Denial(DenialReason reason) implements AuthResult, TokenCarrier.Extraction {
    public Denial {
        Objects.requireNonNull(reason, "reason");
    }
}
