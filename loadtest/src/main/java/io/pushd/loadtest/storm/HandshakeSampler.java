package io.pushd.loadtest.storm;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Completed WebSocket handshakes (admitted or answered with 1013), sampled every bin from the
 * clients' own counters, and turned into handshakes per bin after a restart's trigger.
 */
final class HandshakeSampler {

    private final LongSupplier counter;
    private final int binMs;
    private final long first;
    private final long startNanos;
    private final List<Long> samples = new ArrayList<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "storm-handshake-sampler");
        t.setDaemon(true);
        return t;
    });

    private HandshakeSampler(LongSupplier counter, int binMs) {
        this.counter = counter;
        this.binMs = binMs;
        this.first = counter.getAsLong();
        this.startNanos = System.nanoTime();
    }

    /** Reads {@code counter} now and then every {@code binMs}. */
    static HandshakeSampler start(LongSupplier counter, int binMs) {
        HandshakeSampler s = new HandshakeSampler(counter, binMs);
        s.timer.scheduleAtFixedRate(s::sample, binMs, binMs, TimeUnit.MILLISECONDS);
        return s;
    }

    private void sample() {
        long n = counter.getAsLong();
        synchronized (samples) {
            samples.add(n);
        }
    }

    /**
     * Stops sampling after a last sample, counted in the bin after the last full one: the
     * handshakes since the last tick (as many as a bin's worth) would otherwise be lost.
     */
    void stop() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sample();
    }

    /** Handshakes per bin since {@code triggerNanos}; see {@link #bin}. */
    int[] bins(long triggerNanos, int nBins) {
        List<Long> copy;
        synchronized (samples) {
            copy = new ArrayList<>(samples);
        }
        return bin(first, copy, (startNanos - triggerNanos) / 1_000_000, binMs, nBins);
    }

    /**
     * Sample {@code k} covers {@code (start + k*bin, start + (k+1)*bin]}; its increase over the one
     * before ({@code first} before sample 0) goes into the bin of its start relative to the trigger,
     * clamped to {@code [0, nBins)}.
     *
     * @param startAfterTriggerMs when sampling started, relative to the trigger (about 0, may be negative)
     */
    static int[] bin(long first, List<Long> samples, long startAfterTriggerMs, int binMs, int nBins) {
        int[] bins = new int[nBins];
        long prev = first;
        for (int k = 0; k < samples.size(); k++) {
            long d = samples.get(k) - prev;
            prev = samples.get(k);
            int b = (int) Math.min(nBins - 1, Math.max(0, (startAfterTriggerMs + (long) k * binMs) / binMs));
            bins[b] += (int) d;
        }
        return bins;
    }
}
