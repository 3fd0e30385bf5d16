package io.pushd.server.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The warm-ups' scratch directories under the data directory: emptied before a run and deleted after. */
public final class ScratchDirectory {

    private ScratchDirectory() {
    }

    /** Deletes {@code dir} and everything in it; nothing when it does not exist. */
    public static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) all.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the warm-up's scratch directory " + dir, e);
        }
    }
}
