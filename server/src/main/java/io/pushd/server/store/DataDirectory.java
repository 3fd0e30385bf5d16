package io.pushd.server.store;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of a data directory besides the log: {@code epoch} (the history's name, written once),
 * {@code running} (present while a server runs: {@code <boot id> <fsync>}), {@code heads.properties}
 * (each topic's last sequence, written before log files are deleted so the sequence never goes
 * back), {@code lock} (locked while a server has the directory open: two servers on one directory
 * would hand out the same IDs to different events), {@code log-end} (the last index the log is
 * known to have reached, so that a log that lost its end is known to be damaged), and
 * {@code log/} (the queue, read and written by the store). Small files are replaced atomically (temp file, fsync, rename, fsync of the
 * directory).
 */
final class DataDirectory {

    private static final Logger log = LoggerFactory.getLogger(DataDirectory.class);
    static final String RUNNING_MARKER = "running";
    private static final String EPOCH = "epoch";
    private static final String HEADS = "heads.properties";
    static final String LOCK = "lock";
    static final String LOG_END = "log-end";
    /** The idempotency keys in the dedupe window, saved before retention deletes log files. */
    static final String KEYS = "idempotency-keys";
    static final String DAMAGED_PREFIX = "log.damaged-";
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    private final Path dir;
    private String epoch;
    private final FileChannel lockFile;
    private final FileLock lock;

    /**
     * Opens (creating if need be) the data directory: drops a history a reboot may have cut short,
     * then reads or makes the epoch (a log without an epoch file is cleared).
     */
    DataDirectory(Path dir, boolean fsync) {
        this.dir = dir;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create data directory " + dir, e);
        }
        this.lockFile = openLockFile(dir);
        this.lock = lock(dir, lockFile);
        try {
            discardHistoryLostWithTheMachine(fsync);
            this.epoch = loadOrCreateEpoch();
            String empty = emptyLogFile();
            if (empty != null) {
                // Chronicle would wait ~30 s for the header of an empty file, then find nothing in it
                startNewHistory("log file " + empty + " is empty");
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private static FileChannel openLockFile(Path dir) {
        try {
            return FileChannel.open(dir.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open " + dir.resolve(LOCK) + " (is the data directory writable?)", e);
        }
    }

    /**
     * Takes the directory for this process: an OS lock (fcntl), which the kernel releases however
     * the process ends, kill -9 included, so it never goes stale. The holder's pid is written in
     * the file for the message another server gets.
     */
    private static FileLock lock(Path dir, FileChannel ch) {
        FileLock taken;
        try {
            taken = ch.tryLock();
        } catch (OverlappingFileLockException sameProcess) {
            taken = null;
        } catch (IOException e) {
            close(ch);
            throw new UncheckedIOException("cannot lock " + dir.resolve(LOCK), e);
        }
        if (taken == null) {
            String holder = holder(ch);
            close(ch);
            throw new DataDirectoryInUseException("data directory " + dir + " is in use by another server"
                    + (holder.isEmpty() ? "" : " (pid " + holder + ")")
                    + "; each server needs a data directory of its own (store.dataDir)");
        }
        try {
            byte[] pid = Long.toString(ProcessHandle.current().pid()).getBytes(StandardCharsets.US_ASCII);
            ch.truncate(0);
            ch.write(ByteBuffer.wrap(pid), 0);
        } catch (IOException e) {
            log.debug("could not write the pid into {}", dir.resolve(LOCK), e);
        }
        return taken;
    }

    private static String holder(FileChannel ch) {
        try {
            ByteBuffer b = ByteBuffer.allocate(20);
            ch.read(b, 0);
            String pid = new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII).trim();
            return pid.matches("[0-9]{1,19}") ? pid : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static void close(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // closing releases the lock either way
        }
    }

    /** Gives the directory up (after {@link #markStopped}, or when the store could not open). */
    void close() {
        try {
            if (lock.isValid()) {
                lock.release();
            }
        } catch (IOException ignored) {
            // closing the channel releases it
        }
        close(lockFile);
    }

    String epoch() {
        return epoch;
    }

    Path logDir() {
        return dir.resolve("log");
    }

    /**
     * Without fsync, an OS crash or power loss can take back events that were acknowledged and
     * seen by clients; the next run would hand their numbers out again under the same epoch, and
     * a client resuming after such a number would silently miss the new events. So when the last
     * run did not stop cleanly, ran without fsync, and the machine has booted since, the history
     * is dropped and a new epoch starts: every client gets {@code reset}. A process crash on the
     * same boot (kill -9, OOM) keeps the history: the page cache kept every write.
     */
    private void discardHistoryLostWithTheMachine(boolean fsyncNow) {
        Path marker = dir.resolve(RUNNING_MARKER);
        if (!Files.exists(marker)) {
            return;
        }
        try {
            String[] last = Files.readString(marker, StandardCharsets.US_ASCII).trim().split(" ");
            boolean lastFsync = last.length > 1 && Boolean.parseBoolean(last[1]);
            String boot = bootId();
            if (!lastFsync && boot != null && !boot.equals(last[0])) {
                log.warn("the last run on {} ran without fsync and did not stop before the machine restarted: "
                        + "acknowledged events may be lost, so a new history (epoch) starts", dir);
                Files.deleteIfExists(dir.resolve(EPOCH)); // loadOrCreateEpoch then clears the log
            }
        } catch (IOException | RuntimeException e) {
            log.warn("unreadable {}; keeping the history", marker, e);
        }
    }

    /** Records that a server runs on this directory, on this boot, with or without fsync. */
    void markRunning(boolean fsync) {
        String boot = bootId();
        try {
            Files.writeString(dir.resolve(RUNNING_MARKER), (boot == null ? "unknown" : boot) + " " + fsync,
                    StandardCharsets.US_ASCII);
        } catch (IOException e) {
            log.warn("could not write {}", dir.resolve(RUNNING_MARKER), e);
        }
    }

    /** A clean stop: the next run keeps the history whatever happened to the machine. */
    void markStopped() {
        try {
            Files.deleteIfExists(dir.resolve(RUNNING_MARKER));
        } catch (IOException e) {
            log.warn("could not remove {}", dir.resolve(RUNNING_MARKER), e);
        }
    }

    /** This boot of the machine (Linux); null where unknown, which never discards history. */
    private static String bootId() {
        String forced = System.getProperty("push.bootId"); // tests simulate a reboot with it
        if (forced != null) {
            return forced;
        }
        try {
            return Files.readString(BOOT_ID, StandardCharsets.US_ASCII).trim();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private String loadOrCreateEpoch() {
        Path file = dir.resolve(EPOCH);
        try {
            if (Files.exists(file)) {
                String e = Files.readString(file, StandardCharsets.US_ASCII).trim();
                if (e.matches("[0-9a-z]{1,32}")) {
                    return e;
                }
                throw new IllegalStateException("data directory " + dir + " has a corrupt epoch file");
            }
            if (Files.isDirectory(logDir())) {
                // A log without its epoch is a history we cannot vouch for: start a new one.
                log.warn("data directory {} has a log but no epoch file; starting a new history", dir);
                try (Stream<Path> old = Files.list(logDir())) {
                    for (Path p : (Iterable<Path>) old::iterator) {
                        Files.delete(p);
                    }
                }
                Files.deleteIfExists(dir.resolve(HEADS));
            }
            SecureRandom random = new SecureRandom();
            String epoch = Long.toString(System.currentTimeMillis() / 1000, 36)
                    + Long.toString(Math.floorMod(random.nextLong(), 36L * 36 * 36 * 36), 36);
            writeAtomically(file, epoch.getBytes(StandardCharsets.US_ASCII));
            return epoch;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or create " + file, e);
        }
    }

    /** The name of a log file of zero bytes (a file the queue made has its header), or null. */
    private String emptyLogFile() {
        if (!Files.isDirectory(logDir())) {
            return null;
        }
        try (Stream<Path> files = Files.list(logDir())) {
            return files.filter(f -> f.getFileName().toString().endsWith(".cq4")).filter(f -> {
                try {
                    return Files.size(f) == 0;
                } catch (IOException e) {
                    return false;
                }
            }).map(f -> f.getFileName().toString()).findFirst().orElse(null);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + logDir(), e);
        }
    }

    /**
     * The log is damaged (a file lost, cut short or overwritten): its events cannot all be
     * served, and the numbers after the damage would be handed out again to new events, so a
     * client resuming after one would silently miss what followed. So a new history starts, as
     * after a reboot that lost events: a new epoch (every client gets {@code reset}), an empty
     * log; the damaged one is moved aside ({@code log.damaged-<time>}) for the operator, not
     * deleted. Call with the queue closed.
     */
    void startNewHistory(String why) {
        Path aside = dir.resolve(DAMAGED_PREFIX + java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS")
                .withZone(java.time.ZoneOffset.UTC).format(java.time.Instant.now()));
        try {
            if (Files.isDirectory(logDir())) {
                Files.move(logDir(), aside);
            }
            Files.deleteIfExists(dir.resolve(HEADS));
            Files.deleteIfExists(dir.resolve(LOG_END));
            Files.deleteIfExists(dir.resolve(EPOCH));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot move the damaged log " + logDir() + " aside to " + aside, e);
        }
        String old = epoch;
        epoch = loadOrCreateEpoch();
        log.warn("the log of {} is damaged ({}): a new history (epoch {}, was {}) starts, and every resuming client "
                + "gets reset; the damaged log was moved to {}", dir, why, epoch, old, aside);
    }

    /**
     * The last index the log is known to have reached in this history ({@link #writeLogEnd}), or
     * -1 when none is known.
     */
    long readLogEnd() {
        Path file = dir.resolve(LOG_END);
        try {
            if (!Files.exists(file)) {
                return -1;
            }
            String[] f = Files.readString(file, StandardCharsets.US_ASCII).trim().split(" ");
            return f.length == 2 && f[0].equals(epoch) ? Long.parseLong(f[1]) : -1;
        } catch (IOException | RuntimeException e) {
            log.warn("unreadable {}; the log's end is not checked this time", file);
            return -1;
        }
    }

    /**
     * Records that the log reached {@code lastIndex} (-1: it is empty). Without a sync when
     * {@code durable} is false: a process crash keeps the page cache, and what a power loss takes
     * back, the reboot check ({@code running}) covers.
     */
    void writeLogEnd(long lastIndex, boolean durable) {
        byte[] content = (epoch + " " + lastIndex).getBytes(StandardCharsets.US_ASCII);
        try {
            writeAtomically(dir.resolve(LOG_END), content, durable);
        } catch (IOException e) {
            log.warn("could not write {}", dir.resolve(LOG_END), e);
        }
    }

    /**
     * Saves {@code keys} (an {@link IdempotencyIndex#snapshot}) for this history's epoch, before
     * retention deletes the log files that hold some of them.
     */
    void writeKeys(byte[] keys) {
        try {
            var out = new ByteArrayOutputStream(keys.length + 32);
            var data = new DataOutputStream(out);
            data.writeUTF(epoch());
            data.write(keys);
            data.flush();
            writeAtomically(dir.resolve(KEYS), out.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot save the idempotency keys", e);
        }
    }

    /** The keys saved by {@link #writeKeys} for this history's epoch; null when there are none. */
    byte[] readKeys() {
        Path file = dir.resolve(KEYS);
        if (!Files.exists(file)) {
            return null;
        }
        try (var in = new DataInputStream(Files.newInputStream(file))) {
            if (!epoch().equals(in.readUTF())) {
                return null; // another history's keys: its events are not this one's
            }
            return in.readAllBytes();
        } catch (IOException e) {
            log.warn("cannot read {} ({}); keys of events retention deleted are forgotten", file, e.toString());
            return null;
        }
    }

    /** The heads of the last checkpoint; empty when there is none. */
    Map<String, Long> readHeads() {
        Path file = dir.resolve(HEADS);
        Map<String, Long> heads = new HashMap<>();
        if (!Files.exists(file)) {
            return heads;
        }
        Properties p = new Properties();
        try (var in = Files.newInputStream(file)) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        for (String topic : p.stringPropertyNames()) {
            try {
                heads.put(topic, Long.parseLong(p.getProperty(topic)));
            } catch (NumberFormatException e) {
                throw new IllegalStateException(file + " is corrupt: topic " + topic + " has head "
                        + p.getProperty(topic) + " (expected a sequence number)");
            }
        }
        return heads;
    }

    void writeHeads(Map<String, Long> heads) {
        Properties p = new Properties();
        heads.forEach((t, head) -> p.setProperty(t, Long.toString(head)));
        try {
            var out = new ByteArrayOutputStream();
            p.store(out, "last sequence of each topic; written before log files are deleted");
            writeAtomically(dir.resolve(HEADS), out.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write heads checkpoint", e);
        }
    }

    /** Write to a temp file, fsync, rename over the target, fsync the directory. */
    private void writeAtomically(Path target, byte[] content) throws IOException {
        writeAtomically(target, content, true);
    }

    /** As above; without {@code sync}, the rename alone (atomic, not durable against a power loss). */
    private void writeAtomically(Path target, byte[] content, boolean sync) throws IOException {
        Path tmp = dir.resolve(target.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(ByteBuffer.wrap(content));
            if (sync) {
                ch.force(true);
            }
        }
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
        }
        if (!sync) {
            return;
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // some file systems cannot fsync a directory; the rename is still atomic
        }
    }
}
