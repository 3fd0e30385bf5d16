package io.pushd.server;

import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.TestServers;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The same hand-off with a fan-out coalescing window: live events are held for the window while
 * publishers run flat out and clients switch from replay to live, so a held drain races every
 * hand-off; still every sequence after a client's ID exactly once, in order. Every topic's
 * subscribers are held, however few ({@code coalesceMinSubscribers} 1).
 */
class ExactlyOnceHandOffWithCoalescingTest extends ExactlyOnceHandOffTest {

    @Override
    ServerConfig config(Path dir) {
        return TestServers.config(dir).withFanout(new ServerConfig.Fanout(Duration.ofMillis(2), 1).withWarmup(false));
    }
}
