package io.pushd.loadtest.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * CPU time of a process from {@code /proc/<pid>/stat} ({@code utime + stime}), Linux only. Used to
 * report the server child's CPU use over a measurement window as a percentage of one core.
 */
public final class ProcessCpu {

    private static final long TICKS_PER_SECOND = clockTicks();

    private ProcessCpu() {
    }

    /**
     * The pid of the server this JVM started as a child process and that listens on
     * {@code server.port()}, or empty (an external server, or not Linux-like).
     */
    public static OptionalLong childServerPid(ServerControl server) {
        String port = Integer.toString(server.port());
        return ProcessHandle.current().children()
                .filter(ProcessHandle::isAlive)
                .filter(p -> p.info().arguments().map(a -> List.of(a).contains(port)).orElse(false))
                .findFirst()
                .map(p -> OptionalLong.of(p.pid()))
                .orElse(OptionalLong.empty());
    }

    /** {@code utime + stime} of {@code pid} in nanoseconds, or empty when /proc is not readable. */
    public static OptionalLong cpuNanos(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
            // "pid (comm) state ppid ..." and comm may contain spaces: split after the last ')'.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // fields 14 and 15 of proc(5)
            return OptionalLong.of(ticks * 1_000_000_000L / TICKS_PER_SECOND);
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    /** This JVM's own CPU time (the load generator), nanoseconds, or empty. */
    public static OptionalLong ownCpuNanos() {
        return cpuNanos(ProcessHandle.current().pid());
    }

    /** A CPU-time sample with its wall-clock moment. */
    public record Sample(long wallNanos, long cpuNanos) {

        public static Optional<Sample> of(OptionalLong pid) {
            if (pid.isEmpty()) {
                return Optional.empty();
            }
            OptionalLong cpu = ProcessCpu.cpuNanos(pid.getAsLong());
            return cpu.isPresent() ? Optional.of(new Sample(System.nanoTime(), cpu.getAsLong())) : Optional.empty();
        }

        /** CPU used between {@code earlier} and this sample, as % of one core (-1 when unknown). */
        public static double percentOfOneCore(Optional<Sample> earlier, Optional<Sample> later) {
            if (earlier.isEmpty() || later.isEmpty() || later.get().wallNanos == earlier.get().wallNanos) {
                return -1;
            }
            return 100.0 * (later.get().cpuNanos - earlier.get().cpuNanos)
                    / (later.get().wallNanos - earlier.get().wallNanos);
        }
    }

    private static long clockTicks() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            if (p.waitFor(2, TimeUnit.SECONDS) && p.exitValue() == 0) {
                long t = Long.parseLong(out);
                if (t > 0) {
                    return t;
                }
            }
        } catch (IOException | RuntimeException e) {
            // fall through
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 100; // USER_HZ on every common Linux build
    }
}
