package io.pushd.protocol;

/** Why a requested replay cannot be complete, so the client must reload its state. */
public enum ResetReason {
    /** The requested ID is older than the kept events. */
    EXPIRED("expired"),
    /** The requested ID belongs to another history (the data directory was lost or replaced). */
    UNKNOWN_EPOCH("unknown_epoch"),
    /** The requested ID lies beyond the head of the topic. */
    FUTURE("future");

    private final String wireName;

    ResetReason(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    public static ResetReason fromWire(String name) {
        for (ResetReason r : values()) {
            if (r.wireName.equals(name)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown reset reason: " + name);
    }
}
