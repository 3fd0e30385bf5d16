package io.pushd.server.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Starts {@link ServerProcess}es for one test class and remembers them: {@link #killAll()} (call
 * it from {@code @AfterEach}) kills whatever still runs, and when a test failed the output of
 * every server it started is printed. Register with {@code @RegisterExtension}.
 */
public final class ServerProcesses implements TestWatcher {

    private final List<ServerProcess> started = new CopyOnWriteArrayList<>();
    private final List<ServerProcess> ofLastTest = new CopyOnWriteArrayList<>();

    public ServerProcess start(Path workDir, int port, Path dataDir, String... sets) throws IOException,
            InterruptedException {
        return start(workDir, port, dataDir, List.of(), sets);
    }

    /** As {@link ServerProcess#start(Path, int, Path, List, String...)}: with JVM options, remembered. */
    public ServerProcess start(Path workDir, int port, Path dataDir, List<String> jvmOptions, String... sets)
            throws IOException, InterruptedException {
        return remember(ServerProcess.start(workDir, port, dataDir, jvmOptions, sets));
    }

    /** As {@link ServerProcess#launch(Path, int, Path, List, String...)}: not waited for, remembered. */
    public ServerProcess launch(Path workDir, int port, Path dataDir, List<String> jvmOptions, String... sets)
            throws IOException {
        return remember(ServerProcess.launch(workDir, port, dataDir, jvmOptions, sets));
    }

    private ServerProcess remember(ServerProcess p) {
        started.add(p);
        ofLastTest.add(p);
        return p;
    }

    /** Kills every server still running (SIGKILL); safe to call twice. */
    public void killAll() throws InterruptedException {
        for (ServerProcess p : started) {
            p.close();
        }
        started.clear();
    }

    @Override
    public void testSuccessful(ExtensionContext context) {
        ofLastTest.clear();
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        for (ServerProcess p : ofLastTest) {
            System.err.println("===== output of server pid " + p.pid() + " (port " + p.port() + ") for "
                    + context.getDisplayName() + " =====");
            System.err.println(p.output());
        }
        ofLastTest.clear();
    }

    @Override
    public void testAborted(ExtensionContext context, Throwable cause) {
        testFailed(context, cause);
    }

    @Override
    public void testDisabled(ExtensionContext context, Optional<String> reason) {
        ofLastTest.clear();
    }
}
