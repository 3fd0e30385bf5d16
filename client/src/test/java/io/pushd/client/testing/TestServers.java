package io.pushd.client.testing;

import io.pushd.server.PushServer;
import io.pushd.server.config.ServerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;

/** A real server on loopback with its data in a temp folder (adapted from the server's tests). */
public final class TestServers {

    static {
        System.setProperty("chronicle.analytics.disable", "true");
        System.setProperty("chronicle.announcer.disable", "true");
        System.setProperty("chronicle.disk.monitor.disable", "true");
    }

    private TestServers() {
    }

    /** Defaults, except: {@code port} (0: ephemeral) on 127.0.0.1, data in {@code dataDir}, no balancer grace, no replay or live warm-up, no returns planned after a restart. */
    public static ServerConfig config(Path dataDir, int port) {
        ServerConfig d = ServerConfig.defaults();
        return d.withServer(new ServerConfig.Server("127.0.0.1", port, 2))
                .withStore(d.store().withDataDir(dataDir.toString()).withReplayWarmup(false))
                .withFanout(d.fanout().withWarmup(false))
                .withDrain(new ServerConfig.Drain(Duration.ZERO, d.drain().minWindow(), d.drain().deadline(),
                        false));
    }

    public static PushServer start(Path dataDir) throws InterruptedException {
        return PushServer.start(config(dataDir, 0));
    }

    /** The same port again, e.g. after a restart; retried briefly in case the port is not free yet. */
    public static PushServer start(Path dataDir, int port) throws InterruptedException {
        return start(config(dataDir, port));
    }

    public static PushServer start(ServerConfig config) throws InterruptedException {
        RuntimeException last = null;
        for (int i = 0; i < 20; i++) {
            try {
                return PushServer.start(config);
            } catch (RuntimeException e) {
                last = e;
                Thread.sleep(100);
            }
        }
        throw last;
    }

    /** Deletes everything below {@code dir} (a lost data directory: the next server gets a new epoch). */
    public static void wipe(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).filter(p -> !p.equals(dir)).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
