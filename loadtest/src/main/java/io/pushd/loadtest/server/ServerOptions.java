package io.pushd.loadtest.server;

import io.pushd.loadtest.Commands;
import io.pushd.loadtest.Deadline;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Which server a scenario drives: the fat jar as a child process (default) or an external one on
 * this host ({@code --url}). A picocli mixin, so every subcommand gets the same options.
 */
public final class ServerOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--server-jar", paramLabel = "PATH",
            description = "Server fat jar to run as a child process. Default: server/target/push-server.jar under "
                    + "the working directory, else next to this jar (../../server/target).")
    Path serverJar;

    @Option(names = "--server-set", paramLabel = "KEY=VALUE",
            description = "Setting for the child server, passed as --set (repeatable), e.g. drain.minWindow=5s.")
    List<String> serverSets = new ArrayList<>();

    @Option(names = "--url", paramLabel = "URL",
            description = "Use this already running server instead of starting one (loopback only), "
                    + "e.g. http://127.0.0.1:8080.")
    URI url;

    @Option(names = "--restart-command", paramLabel = "CMD",
            description = "With --url: shell command that restarts the server and returns once it was started "
                    + "again; it sees PUSH_RESTART_MODE=graceful|crash.")
    String restartCommand;

    /**
     * Checks the combination of options and that the jar exists, without starting anything: call it
     * before a run so a usage error is reported as one (exit code 2).
     */
    public void validate(boolean needsRestart) {
        if (url != null) {
            if (serverJar != null || !serverSets.isEmpty()) {
                throw usage("--url cannot be combined with --server-jar or --server-set");
            }
            if (needsRestart && restartCommand == null) {
                throw usage("--url needs --restart-command: an external server cannot be restarted otherwise");
            }
            checkedUrl(url);
        } else {
            if (restartCommand != null) {
                throw usage("--restart-command needs --url (a started server is restarted with signals)");
            }
            for (String set : serverSets) {
                int eq = set.indexOf('=');
                if (eq <= 0) {
                    throw usage("--server-set " + set + ": expected KEY=VALUE, e.g. drain.minWindow=5s");
                }
            }
            resolveJar();
        }
    }

    /** Validates (see {@link #validate}) and starts (or attaches to) the server. */
    public ServerControl open(Path logDir, Deadline deadline, boolean needsRestart)
            throws IOException, InterruptedException {
        return open(logDir, deadline, needsRestart, List.of());
    }

    /**
     * As {@link #open(Path, Deadline, boolean)}, a started server also getting {@code extraSets}
     * (after {@code --server-set}, e.g. the auth settings of {@code --token}); not for {@code --url}.
     */
    public ServerControl open(Path logDir, Deadline deadline, boolean needsRestart, List<String> extraSets)
            throws IOException, InterruptedException {
        validate(needsRestart);
        if (url != null && !extraSets.isEmpty()) {
            throw new IllegalStateException("server settings " + extraSets + " cannot be given to an external server");
        }
        if (url != null) {
            URI base = checkedUrl(url);
            Files.createDirectories(logDir);
            ExternalServer server = new ExternalServer(base, restartCommand, logDir);
            server.awaitReady(deadline);
            return server;
        }
        List<String> sets = new ArrayList<>(serverSets);
        sets.addAll(extraSets);
        return ManagedServer.start(resolveJar(), null, logDir, sets, deadline);
    }

    /** Whether {@code --url} names a server this run does not start. */
    public boolean external() {
        return url != null;
    }

    /** The server fat jar to start (a usage error when there is none). */
    public Path jar() {
        return resolveJar();
    }

    /** The {@code --server-set} settings, in order. */
    public List<String> sets() {
        return List.copyOf(serverSets);
    }

    private URI checkedUrl(URI u) {
        return Commands.loopbackUrl(spec, u);
    }

    private Path resolveJar() {
        if (serverJar != null) {
            if (!Files.isRegularFile(serverJar)) {
                throw usage("--server-jar " + serverJar.toAbsolutePath() + " does not exist; build it with: "
                        + "mvn -q -DskipTests package -pl server -am");
            }
            return serverJar;
        }
        Set<Path> candidates = new LinkedHashSet<>();
        String prop = System.getProperty("push.server.jar");
        if (prop != null) {
            candidates.add(Path.of(prop));
        }
        candidates.add(Path.of("server", "target", "push-server.jar"));
        candidates.add(Path.of("..", "server", "target", "push-server.jar"));
        ownJarDir().ifPresent(dir -> candidates.add(dir.resolve("../../server/target/push-server.jar").normalize()));
        for (Path c : candidates) {
            if (Files.isRegularFile(c)) {
                return c;
            }
        }
        StringBuilder tried = new StringBuilder();
        candidates.forEach(c -> tried.append("\n  ").append(c.toAbsolutePath().normalize()));
        throw usage("server jar not found; tried:" + tried
                + "\nbuild it (mvn -q -DskipTests package -pl server -am) or pass --server-jar PATH");
    }

    private static java.util.Optional<Path> ownJarDir() {
        try {
            Path p = Path.of(ServerOptions.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return Files.isRegularFile(p) ? java.util.Optional.of(p.getParent()) : java.util.Optional.empty();
        } catch (Exception e) {
            return java.util.Optional.empty();
        }
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
