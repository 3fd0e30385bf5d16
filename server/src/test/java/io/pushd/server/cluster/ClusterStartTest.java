package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.PushServerMain;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Start-up in cluster mode with a Redis that cannot be used: exit 2 and one line, like a bad key
 * (the supervisor restarts the node; once running, a lost Redis is retried instead).
 */
class ClusterStartTest {

    @TempDir
    Path dir;

    /** Runs the daemon's command line; returns {exit code, stderr}. */
    private Object[] start(String redisUri) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream saved = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = new CommandLine(new PushServerMain()).execute("--port", "0", "--data-dir", dir.toString(),
                    "--set", "cluster.redisUri=" + redisUri, "--set", "cluster.redisTimeout=500ms");
        } finally {
            System.setErr(saved);
        }
        return new Object[] {code, err.toString(StandardCharsets.UTF_8)};
    }

    private static long clusterErrorLines(String stderr) {
        return stderr.lines().filter(l -> l.startsWith("cluster error")).count();
    }

    @Test
    void anUnreachableRedisAtStartExitsWithCodeOneForTheSupervisorToRetryAndOneLineWithoutThePassword() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        Object[] r = start("redis://user:s3cret@127.0.0.1:" + port);
        String stderr = (String) r[1];
        assertThat(r[0]).as(stderr).isEqualTo(1);
        assertThat(stderr).contains("cluster error: cannot reach Redis at redis://***@127.0.0.1:" + port)
                .contains("exit 1").doesNotContain("s3cret");
        assertThat(clusterErrorLines(stderr)).isEqualTo(1);
    }

    @Test
    void aWrongPasswordExitsWithCodeTwoAndOneLineThatNeverShowsIt() throws Exception {
        try (RedisProcess redis = RedisProcess.start(dir, "--requirepass", "right-one")) {
            String port = redis.uri().substring(redis.uri().lastIndexOf(':') + 1);
            Object[] r = start("redis://:wr0ng-pass@127.0.0.1:" + port);
            String stderr = (String) r[1];
            assertThat(r[0]).as(stderr).isEqualTo(2);
            assertThat(stderr).contains("cluster error: cannot use Redis at redis://***@127.0.0.1:" + port)
                    .contains("WRONGPASS").doesNotContain("wr0ng-pass").doesNotContain("right-one");
            assertThat(clusterErrorLines(stderr)).isEqualTo(1);

            Object[] none = start(redis.uri()); // no password at all: Redis answers NOAUTH
            assertThat(none[0]).as((String) none[1]).isEqualTo(2);
            assertThat((String) none[1]).contains("NOAUTH");
        }
    }

    @Test
    void aRedisOlderThanSevenExitsWithCodeTwoAndOneLineNamingItsVersion() throws Exception {
        try (FakeRedis62 old = new FakeRedis62()) {
            Object[] r = start("redis://127.0.0.1:" + old.port());
            String stderr = (String) r[1];
            assertThat(r[0]).as(stderr).isEqualTo(2);
            assertThat(stderr).contains("cluster error: cannot use Redis at redis://127.0.0.1:" + old.port()
                    + ": Redis 6.2.6 is too old (expected: 7.0 or newer");
            assertThat(clusterErrorLines(stderr)).isEqualTo(1);
            assertThat(old.commands).as("asked for its version").contains("INFO");
        }
    }

    @Test
    void aRefusalThatFirstLooksLikeAClosedConnectionIsAskedOnceMoreAndExitsWithCodeTwo() throws Exception {
        // How Lettuce reports a wrong password now and then: the handshake's connection closed
        // before its WRONGPASS is read. One more attempt hears the refusal.
        try (FakeRedis62 redis = new FakeRedis62(true)) {
            Object[] r = start("redis://:wr0ng-pass@127.0.0.1:" + redis.port());
            String stderr = (String) r[1];
            assertThat(r[0]).as(stderr).isEqualTo(2);
            assertThat(stderr).contains("WRONGPASS").doesNotContain("wr0ng-pass");
            assertThat(clusterErrorLines(stderr)).isEqualTo(1);
            assertThat(redis.connections.get()).as("the closed one and the one that was refused").isEqualTo(2);
        }
    }

    /**
     * Speaks just enough RESP, as Redis 6.2.6 answers: HELLO 3 (its RESP3 map), CLIENT
     * (6.2 has no SETINFO: an error), PING, INFO; anything else is an unknown command. No
     * Redis 6 binary is installed here, and the daemon must stop before it runs anything else.
     */
    static final class FakeRedis62 implements AutoCloseable {
        final List<String> commands = java.util.Collections.synchronizedList(new ArrayList<>());
        final java.util.concurrent.atomic.AtomicInteger connections = new java.util.concurrent.atomic.AtomicInteger();
        private final ServerSocket server;
        private final Thread acceptor;

        FakeRedis62() throws IOException {
            this(false);
        }

        /**
         * @param refusing instead of a Redis 6.2.6: the first connection is closed at its first
         *                 command, every later one is refused (WRONGPASS) whatever it asks
         */
        FakeRedis62(boolean refusing) throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            acceptor = new Thread(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket s = server.accept();
                        int n = connections.incrementAndGet();
                        Runnable serve = !refusing ? () -> serve(s) : n == 1 ? () -> closeAtFirstCommand(s) : () -> refuse(s);
                        Thread t = new Thread(serve, "fake-redis-conn");
                        t.setDaemon(true);
                        t.start();
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "fake-redis-accept");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return server.getLocalPort();
        }

        private void serve(Socket s) {
            try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                while (true) {
                    List<String> command = readCommand(in);
                    if (command == null) {
                        return;
                    }
                    String name = command.get(0).toUpperCase(java.util.Locale.ROOT);
                    commands.add(name);
                    out.write(answer(name).getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            } catch (IOException e) {
                // the client went away
            }
        }

        private static void closeAtFirstCommand(Socket s) {
            try (s; InputStream in = s.getInputStream()) {
                readCommand(in);
            } catch (IOException e) {
                // the client went away
            }
        }

        private static void refuse(Socket s) {
            try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                while (readCommand(in) != null) {
                    out.write("-WRONGPASS invalid username-password pair or user is disabled.\r\n"
                            .getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            } catch (IOException e) {
                // the client went away
            }
        }

        private static String answer(String name) {
            return switch (name) {
                case "HELLO" -> "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n6.2.6\r\n"
                        + "$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:7\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n"
                        + "$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n";
                case "CLIENT" -> "-ERR Unknown subcommand or wrong number of arguments for 'SETINFO'. Try CLIENT HELP.\r\n";
                case "PING" -> "+PONG\r\n";
                case "INFO" -> {
                    String info = "# Server\r\nredis_version:6.2.6\r\nredis_mode:standalone\r\n";
                    yield "$" + info.length() + "\r\n" + info + "\r\n";
                }
                default -> "-ERR unknown command '" + name + "'\r\n";
            };
        }

        /** One RESP array of bulk strings, or null at the end of the stream. */
        private static List<String> readCommand(InputStream in) throws IOException {
            String header = line(in);
            if (header == null) {
                return null;
            }
            int n = Integer.parseInt(header.substring(1));
            List<String> parts = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int len = Integer.parseInt(line(in).substring(1));
                byte[] b = in.readNBytes(len + 2);
                parts.add(new String(b, 0, len, StandardCharsets.UTF_8));
            }
            return parts;
        }

        private static String line(InputStream in) throws IOException {
            StringBuilder b = new StringBuilder();
            int c;
            while ((c = in.read()) != -1) {
                if (c == '\n') {
                    return b.toString().stripTrailing();
                }
                b.append((char) c);
            }
            return null;
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
