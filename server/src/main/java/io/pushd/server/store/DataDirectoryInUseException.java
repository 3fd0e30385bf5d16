package io.pushd.server.store;

/** Another server (process) has the data directory open: this one must not start on it. */
public final class DataDirectoryInUseException extends IllegalStateException {

    DataDirectoryInUseException(String message) {
        super(message);
    }
}
