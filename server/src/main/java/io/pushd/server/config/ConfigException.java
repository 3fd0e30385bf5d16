package io.pushd.server.config;

/** A configuration that cannot start the server; the message names the key, the value and what was expected. */
public final class ConfigException extends RuntimeException {
    public ConfigException(String message) {
        super(message);
    }
}
