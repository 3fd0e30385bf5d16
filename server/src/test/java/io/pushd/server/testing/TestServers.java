package io.pushd.server.testing;

import io.pushd.server.PushServer;
import io.pushd.server.config.ServerConfig;
import java.nio.file.Path;
import java.time.Duration;

/** A real server on an ephemeral loopback port with its data in a temp folder. */
public final class TestServers {

    static {
        System.setProperty("chronicle.analytics.disable", "true");
        System.setProperty("chronicle.announcer.disable", "true");
        System.setProperty("chronicle.disk.monitor.disable", "true");
    }

    private TestServers() {
    }

    /**
     * Defaults, except: port 0 on 127.0.0.1, data in {@code dataDir}, no balancer grace, no replay
     * warm-up (half a second per start; {@code ReplayWarmupTest} has it) and no live warm-up (a few
     * seconds; {@code LiveWarmupTest} has it), no returns planned after a restart (an in-process
     * server has no process to restart; {@code DrainAfterStartTest} has it), 2 I/O threads.
     */
    public static ServerConfig config(Path dataDir) {
        ServerConfig d = ServerConfig.defaults();
        return d.withServer(new ServerConfig.Server("127.0.0.1", 0, 2))
                .withStore(d.store().withDataDir(dataDir.toString()).withReplayWarmup(false))
                .withFanout(d.fanout().withWarmup(false))
                .withDrain(new ServerConfig.Drain(Duration.ZERO, d.drain().minWindow(), d.drain().deadline(),
                        false));
    }

    public static PushServer start(Path dataDir) throws InterruptedException {
        return PushServer.start(config(dataDir));
    }

    public static PushServer start(ServerConfig config) throws InterruptedException {
        return PushServer.start(config);
    }
}
