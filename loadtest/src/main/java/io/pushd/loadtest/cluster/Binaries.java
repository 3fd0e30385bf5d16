package io.pushd.loadtest.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;

/** Finds the external programs a cluster run starts (nginx, redis-server). */
public final class Binaries {

    private Binaries() {
    }

    /**
     * {@code given} if set, else {@code name} in {@code /usr/sbin}, {@code /usr/bin},
     * {@code /usr/local/bin} or on {@code PATH}: the first executable one.
     */
    public static Optional<Path> find(Path given, String name) {
        if (given != null) {
            return Files.isExecutable(given) ? Optional.of(given) : Optional.empty();
        }
        return Stream.concat(Stream.of("/usr/sbin", "/usr/bin", "/usr/local/bin"),
                        Stream.of(System.getenv().getOrDefault("PATH", "").split(":")))
                .filter(d -> !d.isEmpty())
                .map(d -> Path.of(d, name))
                .filter(Files::isExecutable)
                .findFirst();
    }
}
