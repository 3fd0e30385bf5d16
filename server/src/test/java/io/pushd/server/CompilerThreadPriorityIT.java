package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.testing.ServerProcess;
import io.pushd.server.testing.ServerProcesses;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged daemon puts the JIT's compiler threads behind its event loops once it is ready
 * ({@code server.compilerThreadNice}, nice 19 by default), as the kernel reports them in
 * {@code /proc/<pid>/task/<tid>/stat}; {@code 0} leaves every thread as it was.
 */
class CompilerThreadPriorityIT {

    @RegisterExtension
    final ServerProcesses servers = new ServerProcesses();

    @TempDir
    Path tmp;

    @AfterEach
    void kill() throws InterruptedException {
        servers.killAll();
    }

    /** Thread name → the highest nice among the process's threads of that name. */
    private static Map<String, Integer> niceByThreadName(long pid) throws IOException {
        Map<String, Integer> out = new TreeMap<>();
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                String stat;
                try {
                    stat = Files.readString(t.resolve("stat"));
                } catch (IOException ended) {
                    continue;
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                // after "pid (comm) ": state is field 3, nice field 19, so the 17th from there
                int nice = Integer.parseInt(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[16]);
                out.merge(name, nice, Math::max);
            }
        }
        return out;
    }

    private static Map<String, Integer> awaitCompilerNice(long pid, int nice) throws Exception {
        Map<String, Integer> seen = Map.of();
        for (int i = 0; i < 100; i++) { // set just after the server says it is ready
            seen = niceByThreadName(pid);
            if (seen.getOrDefault("C2 CompilerThre", -1) == nice && seen.getOrDefault("C1 CompilerThre", -1) == nice) {
                break;
            }
            Thread.sleep(100);
        }
        return seen;
    }

    @Test
    void onceReadyTheCompilerThreadsRunAtNice19AndTheEventLoopsAtTheirOwn() throws Exception {
        ServerProcess server = servers.start(tmp.resolve("w"), ServerProcess.freePort(), tmp.resolve("data"));

        Map<String, Integer> nice = awaitCompilerNice(server.pid(), 19);

        assertThat(nice).containsEntry("C2 CompilerThre", 19).containsEntry("C1 CompilerThre", 19)
                .containsEntry("multiThreadIoEv", 0);
        assertThat(server.output()).contains("JIT compiler threads at nice 19");
    }

    @Test
    void zeroLeavesTheCompilerThreadsAlone() throws Exception {
        ServerProcess server = servers.start(tmp.resolve("w"), ServerProcess.freePort(), tmp.resolve("data"),
                "server.compilerThreadNice=0");

        Thread.sleep(1_000); // what a lowering would have taken, and more
        assertThat(niceByThreadName(server.pid())).containsEntry("C2 CompilerThre", 0)
                .containsEntry("C1 CompilerThre", 0);
        assertThat(server.output()).doesNotContain("JIT compiler threads");
    }
}
