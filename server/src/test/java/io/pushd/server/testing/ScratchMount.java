package io.pushd.server.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A small file system of its own for a test: a tmpfs or a loop-mounted ext4 image. Mounting needs
 * root (and a loop device for ext4); where it is refused the test is skipped, with the reason.
 * {@link #close()} unmounts.
 */
public final class ScratchMount implements AutoCloseable {

    private final Path dir;
    private final Path image;

    private ScratchMount(Path dir, Path image) {
        this.dir = dir;
        this.image = image;
    }

    /** A tmpfs of {@code mib} MiB mounted on {@code parent/mnt}. */
    public static ScratchMount tmpfs(Path parent, int mib) throws Exception {
        Path dir = Files.createDirectories(parent.resolve("mnt"));
        mount(List.of("mount", "-t", "tmpfs", "-o", "size=" + mib + "m", "tmpfs", dir.toString()), "tmpfs");
        return new ScratchMount(dir, null);
    }

    /** An ext4 image of {@code mib} MiB, loop-mounted on {@code parent/mnt}. */
    public static ScratchMount ext4(Path parent, int mib) throws Exception {
        Path dir = Files.createDirectories(parent.resolve("mnt"));
        Path image = parent.resolve("ext4.img");
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.truncate((long) mib << 20);
            ch.write(ByteBuffer.wrap(new byte[1]), ((long) mib << 20) - 1);
        }
        String mkfs = run(List.of("mkfs.ext4", "-q", "-F", "-m", "0", image.toString()));
        assumeTrue(mkfs == null, "mkfs.ext4 not usable here: " + mkfs);
        mount(List.of("mount", "-o", "loop", image.toString(), dir.toString()), "a loop-mounted ext4 image");
        return new ScratchMount(dir, image);
    }

    private static void mount(List<String> cmd, String what) throws Exception {
        String failure = run(cmd);
        assumeTrue(failure == null, "skipped: cannot mount " + what + " here (needs root and, for ext4, a loop"
                + " device): " + failure);
    }

    /** Null when the command succeeded, else what it said. */
    private static String run(List<String> cmd) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            return e.getMessage();
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return String.join(" ", cmd) + ": timed out";
        }
        return p.exitValue() == 0 ? null : String.join(" ", cmd) + ": exit " + p.exitValue() + ": " + out;
    }

    public Path dir() {
        return dir;
    }

    /** Usable bytes of the mounted file system now. */
    public long usableBytes() throws IOException {
        return Files.getFileStore(dir).getUsableSpace();
    }

    /** Writes a file of real (not sparse) blocks that leaves about {@code leaveFree} bytes usable. */
    public Path fill(String name, long leaveFree) throws IOException {
        Path filler = dir.resolve(name);
        long size = usableBytes() - leaveFree;
        ByteBuffer block = ByteBuffer.allocate(1 << 20);
        try (FileChannel ch = FileChannel.open(filler, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long written = 0; written < size; ) {
                block.clear().limit((int) Math.min(block.capacity(), size - written));
                written += ch.write(block);
            }
            ch.force(true);
        }
        return filler;
    }

    @Override
    public void close() throws Exception {
        String failure = run(List.of("umount", dir.toString()));
        if (failure != null) {
            run(List.of("umount", "-l", dir.toString())); // something still holds it: detach anyway
        }
        if (image != null) {
            Files.deleteIfExists(image);
        }
    }
}
