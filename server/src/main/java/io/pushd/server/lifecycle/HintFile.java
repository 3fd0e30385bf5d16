package io.pushd.server.lifecycle;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One number the next start reads from the data directory to plan the clients' return (how many
 * were connected, how long the start took). A hint, not data: written without fsync, replaced
 * atomically, and a missing or unreadable file means "unknown".
 */
public final class HintFile {

    private static final Logger log = LoggerFactory.getLogger(HintFile.class);

    private final Path file;

    public HintFile(Path file) {
        this.file = file;
    }

    /** The number last written, or {@code unknown} when there is none, it is unreadable or negative. */
    public long read(long unknown) {
        try {
            if (!Files.exists(file)) {
                return unknown;
            }
            long value = Long.parseLong(Files.readString(file, StandardCharsets.US_ASCII).trim());
            return value < 0 ? unknown : value;
        } catch (IOException | NumberFormatException e) {
            log.debug("ignoring unreadable {}: {}", file, e.toString());
            return unknown;
        }
    }

    /** Replaces the number; false (and a debug line) when the file could not be written. */
    public boolean write(long value) {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.writeString(tmp, Long.toString(value), StandardCharsets.US_ASCII);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return true;
        } catch (IOException e) {
            log.debug("could not write {}: {}", file, e.toString());
            return false;
        }
    }

    @Override
    public String toString() {
        return file.toString();
    }
}
