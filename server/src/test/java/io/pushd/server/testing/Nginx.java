package io.pushd.server.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * The real nginx running {@code config/nginx.conf.example} (upstream server line, listen line and
 * log paths swapped for loopback/temp values) in the foreground, for integration tests.
 */
public final class Nginx implements AutoCloseable {

    private final Process process;
    private final Path dir;
    private final int port;

    private Nginx(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
    }

    /**
     * The nginx binary; aborts the test when there is none, unless {@code PUSH_REQUIRE_NGINX=true}
     * (system property or environment variable; {@code .ci/run} sets it), which makes it a failure.
     */
    public static Path binary() {
        Path binary = Stream.concat(Stream.of(Path.of("/usr/sbin/nginx")),
                        Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                                .filter(d -> !d.isEmpty()).map(d -> Path.of(d, "nginx")))
                .filter(Files::isExecutable).findFirst().orElse(null);
        if (binary == null) {
            String message = "nginx not found (neither /usr/sbin/nginx nor on PATH); install the Debian package"
                    + " `nginx` to run this test";
            String require = System.getProperty("PUSH_REQUIRE_NGINX", System.getenv("PUSH_REQUIRE_NGINX"));
            if ("true".equalsIgnoreCase(require)) {
                throw new AssertionError(message + " (PUSH_REQUIRE_NGINX=true: not skipping)");
            }
            Assumptions.abort(message);
        }
        return binary;
    }

    public int port() {
        return port;
    }

    public Path dir() {
        return dir;
    }

    /**
     * Writes {@code config/nginx.conf.example} with loopback ports and temp paths into
     * {@code tmp/nginx}, wraps it in a minimal main config, runs nginx in the foreground and waits
     * until it proxies ({@code GET /v1/topics/{probeTopic}} answers 200).
     */
    public static Nginx start(Path binary, Path tmp, int serverPort, String probeTopic)
            throws IOException, InterruptedException {
        Path nginxDir = Files.createDirectories(tmp.resolve("nginx"));
        int port = ServerProcess.freePort();
        Path example = Path.of(System.getProperty("user.dir")).resolve("../config/nginx.conf.example").normalize();
        assertThat(example).as("the example config (the module dir is the working directory)").isRegularFile();
        String site = Files.readString(example, StandardCharsets.UTF_8);
        site = oneUpstream(site, serverPort);
        site = replaceAll(site, "(?m)^(\\s*)listen\\s+[^;]+;", "$1listen 127.0.0.1:" + port + ";", 1, "listen line");
        site = replaceAll(site, "/var/log/nginx/", Matcher.quoteReplacement(nginxDir + "/"), 1, "log path");
        Files.writeString(nginxDir.resolve("push-server.conf"), site);

        String d = nginxDir.toString();
        String main = (isRoot() ? "user root;\n" : "") // else the workers run as nobody: no access to the temp dir
                + "worker_processes 1;\n"
                + "error_log " + d + "/error.log info;\n"
                + "events { worker_connections 1024; }\n"
                + "http {\n"
                + "    client_body_temp_path " + d + "/client_body;\n"
                + "    proxy_temp_path " + d + "/proxy;\n"
                + "    fastcgi_temp_path " + d + "/fastcgi;\n"
                + "    uwsgi_temp_path " + d + "/uwsgi;\n"
                + "    scgi_temp_path " + d + "/scgi;\n"
                + "    access_log " + d + "/access.log;\n"
                + "    include " + d + "/push-server.conf;\n"
                + "}\n";
        Files.writeString(nginxDir.resolve("nginx.conf"), main);

        Process nginx = new ProcessBuilder(binary.toString(), "-p", d + "/", "-c", d + "/nginx.conf", "-e",
                d + "/error.log", "-g", "daemon off; pid " + d + "/nginx.pid;")
                .redirectErrorStream(true)
                .redirectOutput(nginxDir.resolve("nginx.out").toFile())
                .start();
        Nginx n = new Nginx(nginx, nginxDir, port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            if (!nginx.isAlive()) {
                throw new AssertionError("nginx exited with " + nginx.exitValue() + ":\n" + n.logs());
            }
            try {
                if (Http.get(port, "/v1/topics/" + probeTopic).status() == 200) {
                    return n;
                }
            } catch (IllegalStateException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("nginx did not proxy within 10 s:\n" + n.logs());
            }
            Thread.sleep(100);
        }
    }

    public String logs() {
        StringBuilder b = new StringBuilder();
        for (String f : List.of("nginx.out", "error.log")) {
            try {
                b.append("--- ").append(f).append(":\n").append(Files.readString(dir.resolve(f)));
            } catch (IOException e) {
                b.append("--- ").append(f).append(": ").append(e).append('\n');
            }
        }
        return b.toString();
    }

    /** SIGTERM (nginx's fast shutdown, master and workers), then kill what is left. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /**
     * The example lists the nodes of a cluster: in each upstream block the first server line
     * points at our one server, the other active ones are commented out (the test runs one node
     * without Redis).
     */
    private static String oneUpstream(String site, int serverPort) {
        Pattern server = Pattern.compile("^(\\s*)server\\s+[0-9A-Za-z.\\-\\[\\]:]+:\\d+(.*)$");
        Pattern upstream = Pattern.compile("^\\s*upstream\\s.*");
        StringBuilder out = new StringBuilder();
        boolean replacedInBlock = false;
        int blocks = 0;
        for (String line : site.split("\n", -1)) {
            Matcher m = server.matcher(line);
            if (upstream.matcher(line).matches()) {
                replacedInBlock = false;
            } else if (m.matches()) {
                line = replacedInBlock ? m.group(1) + "# " + line.trim()
                        : m.group(1) + "server 127.0.0.1:" + serverPort + m.group(2);
                blocks += replacedInBlock ? 0 : 1;
                replacedInBlock = true;
            }
            out.append(line).append('\n');
        }
        out.setLength(out.length() - 1);
        assertThat(blocks).as("upstream server lines in config/nginx.conf.example (the test templates them)")
                .isGreaterThanOrEqualTo(1);
        return out.toString();
    }

    private static String replaceAll(String text, String regex, String replacement, int atLeast, String what) {
        Matcher m = Pattern.compile(regex).matcher(text);
        int count = 0;
        while (m.find()) {
            count++;
        }
        assertThat(count).as(what + " in config/nginx.conf.example (the test templates it)").isGreaterThanOrEqualTo(
                atLeast);
        return m.replaceAll(replacement);
    }
}
