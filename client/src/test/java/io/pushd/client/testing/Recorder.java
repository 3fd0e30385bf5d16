package io.pushd.client.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.client.PushListener;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ResetReason;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/** A listener that keeps everything it is told, with nanoTime stamps, for assertions. */
public class Recorder implements PushListener {

    public record Event(String topic, EventId id, long ts, JsonNode data, Thread thread) {
    }

    public record Reset(String topic, EventId id, ResetReason reason) {
    }

    public record Close(int code, String reason, long nanoTime) {
    }

    public final List<Event> events = new CopyOnWriteArrayList<>();
    public final List<Reset> resets = new CopyOnWriteArrayList<>();
    public final List<String> subscribed = new CopyOnWriteArrayList<>();
    public final List<Long> connected = new CopyOnWriteArrayList<>();
    public final List<Close> closes = new CopyOnWriteArrayList<>();
    public final List<Throwable> connectFailures = new CopyOnWriteArrayList<>();
    /** {@code "<status> <error>"} per {@link #onAccessDenied}. */
    public final List<String> denials = new CopyOnWriteArrayList<>();

    @Override
    public void onEvent(String topic, EventId id, long ts, JsonNode data) {
        events.add(new Event(topic, id, ts, data, Thread.currentThread()));
    }

    @Override
    public void onReset(String topic, EventId id, ResetReason reason) {
        resets.add(new Reset(topic, id, reason));
    }

    @Override
    public void onSubscribed(String topic, EventId head, EventId oldest) {
        subscribed.add(topic);
    }

    @Override
    public void onConnected(long nanoTime) {
        connected.add(nanoTime);
    }

    @Override
    public void onDisconnected(int closeCode, String reason) {
        closes.add(new Close(closeCode, reason, System.nanoTime()));
    }

    @Override
    public void onConnectFailed(Throwable cause) {
        connectFailures.add(cause);
    }

    @Override
    public void onAccessDenied(int status, String error) {
        denials.add(status + " " + error);
    }

    public List<Long> seqs() {
        return events.stream().map(e -> e.id().seq()).toList();
    }

    /** Polls {@code condition} until it holds; fails with {@code what} after {@code timeout}. */
    public static void await(String what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for: " + what);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
