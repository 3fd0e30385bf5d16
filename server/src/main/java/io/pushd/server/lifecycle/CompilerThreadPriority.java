package io.pushd.server.lifecycle;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Lowers the scheduling priority (nice) of the JVM's JIT compiler threads, once the server is
 * ready, so that a compilation waits for the event loops instead of delaying a publish's answer or
 * a delivery. On a busy core the compiler threads otherwise take turns with the event loops, and
 * a C2 compilation of tens of milliseconds then holds back whatever the loops were about to do:
 * on one core under 1,000 subscribers × 100 events a second, the publish p99 was 10–17 ms with
 * them at the loops' priority and 8.5–11 ms at nice 19 (README, Performance). What it costs: the
 * JIT's work is done later while the core is busy, so code stays less compiled for longer after a
 * start (about 12 % more CPU per delivery in the first ten seconds of that run), and under a
 * saturated core the compiler threads run only in what the loops leave.
 *
 * <p>Linux only: the threads are found by name in {@code /proc/self/task} ({@code C1
 * CompilerThre…}, {@code C2 CompilerThre…}), and {@code setpriority(PRIO_PROCESS, tid, nice)}
 * applies to one thread there. Lowering a priority needs no privilege. Compiler threads HotSpot
 * adds later are started by a compiler thread and inherit its nice. Called through jnr-ffi, which
 * Chronicle's POSIX layer has already loaded; where anything of this is missing the priorities
 * stay as they are and {@link Result#problem} says why.
 */
public final class CompilerThreadPriority {

    /** How many compiler threads were set to which nice; {@code problem} is null unless something failed. */
    public record Result(int threads, int nice, String problem) {
    }

    /** setpriority(2) through jnr-ffi. */
    public interface LibC {
        int setpriority(int which, int who, int prio);
    }

    private static final int PRIO_PROCESS = 0;
    private static final Path TASKS = Path.of("/proc/self/task");

    private CompilerThreadPriority() {
    }

    /** Sets every compiler thread of this JVM to {@code nice} (1-19); 0 leaves them alone. */
    public static Result lower(int nice) {
        return lower(nice, TASKS);
    }

    /** As {@link #lower(int)}, for the threads listed under {@code tasks} (a {@code /proc/<pid>/task}). */
    static Result lower(int nice, Path tasks) {
        if (nice == 0) {
            return new Result(0, 0, null);
        }
        List<Integer> tids;
        try {
            tids = compilerThreads(tasks);
        } catch (IOException | RuntimeException e) {
            return new Result(0, nice, "cannot list this process's threads in " + tasks + ": " + e.getMessage());
        }
        if (tids.isEmpty()) {
            return new Result(0, nice, "no JIT compiler thread found in " + tasks);
        }
        LibC libc;
        try {
            libc = jnr.ffi.LibraryLoader.create(LibC.class).load("c");
        } catch (LinkageError | RuntimeException e) {
            return new Result(0, nice, "cannot call setpriority: " + e);
        }
        int set = 0;
        String problem = null;
        for (int tid : tids) {
            if (libc.setpriority(PRIO_PROCESS, tid, nice) == 0) {
                set++;
            } else {
                problem = "setpriority failed for thread " + tid;
            }
        }
        return new Result(set, nice, problem);
    }

    /** The thread ids under {@code tasks} whose name is a HotSpot compiler thread's. */
    static List<Integer> compilerThreads(Path tasks) throws IOException {
        List<Integer> out = new ArrayList<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(tasks)) {
            for (Path task : dir) {
                String name;
                try {
                    name = Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).trim();
                } catch (IOException ended) {
                    continue; // the thread ended meanwhile
                }
                if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
                    out.add(Integer.parseInt(task.getFileName().toString()));
                }
            }
        }
        return out;
    }
}
