package io.pushd.server.history;

/**
 * A publish was appended to the log, but the sync that makes its batch durable failed
 * ({@code store.fsync: true}): the event may be in the history (it is, unless the machine loses
 * power before a later sync succeeds), so its answer is "may be stored, retry with the same
 * Idempotency-Key" (503), not "not stored". Its number stays used; a retry with the key gets it back.
 */
public final class NotDurableException extends RuntimeException {

    public NotDurableException(Throwable cause) {
        super("the batch was appended but its sync failed", cause);
    }
}
