package io.pushd.server.lifecycle;

import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many WebSocket connections the server had, kept in the data directory ({@code connections})
 * so that the next start knows how many clients to expect back, also after a crash. A hint, not
 * data: it is written without fsync and a missing or unreadable file means "unknown" (0).
 */
public final class ConnectionCountCheckpoint {

    private static final Logger log = LoggerFactory.getLogger(ConnectionCountCheckpoint.class);

    private final HintFile file;
    private int lastWritten = -1;
    private boolean frozen;

    public ConnectionCountCheckpoint(Path dataDir) {
        this.file = new HintFile(dataDir.resolve("connections"));
    }

    public int read() {
        return (int) Math.min(Integer.MAX_VALUE, file.read(0));
    }

    /** Writes {@code count} when it changed since the last write, unless {@link #writeFinal} was called. */
    public synchronized void write(int count) {
        if (frozen || count == lastWritten) {
            return;
        }
        store(count);
    }

    /**
     * Writes the count the next start should expect back (the drain's: the connections it is
     * about to close) and keeps it: the periodic {@link #write} stops, since it would replace it
     * with the count of connections being closed (one restart expected 200 of its 1,000 clients,
     * ramped them, and let the other 800 in at once).
     */
    public synchronized void writeFinal(int count) {
        frozen = true;
        if (!store(count)) {
            log.warn("could not keep the drain's connection count ({}) in {}: the next start expects the last "
                    + "one written, at most 2 s older", count, file);
        }
    }

    private boolean store(int count) {
        if (!file.write(count)) {
            return false;
        }
        lastWritten = count;
        return true;
    }
}
