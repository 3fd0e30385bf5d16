package io.pushd.server.store;

/**
 * An event was not stored because the disk has no room for it (or writing to the log failed):
 * nothing was written, no sequence number was used, and the publish must not be acknowledged.
 * The client may retry later (HTTP 507 {@code storage_full} with {@code Retry-After}).
 */
public final class StorageFullException extends RuntimeException {

    public StorageFullException(String message) {
        super(message, null, false, false); // refused publishes are counted, not traced
    }

    public StorageFullException(String message, Throwable cause) {
        super(message, cause);
    }
}
