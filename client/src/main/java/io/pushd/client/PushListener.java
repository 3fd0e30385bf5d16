package io.pushd.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ResetReason;

/**
 * What a {@link PushClient} reports. Every call for one client comes from that client's event loop,
 * one at a time and in order, so an implementation needs no locking for per-client state but must
 * not block: the loop serves many clients. An exception thrown here is logged and ignored.
 */
public interface PushListener {

    /** An event, in sequence order per topic, each exactly once (duplicates are dropped before this). */
    void onEvent(String topic, EventId id, long ts, JsonNode data);

    /**
     * The history could not be replayed completely: reload the topic's state from its source of
     * truth. Events after {@code id} follow.
     */
    void onReset(String topic, EventId id, ResetReason reason);

    /** The server confirmed a topic; {@code head}/{@code oldest} are null for an empty topic. */
    default void onSubscribed(String topic, EventId head, EventId oldest) {
    }

    /**
     * The WebSocket handshake completed (SSE: the 200 event stream began); {@code nanoTime} is
     * {@link System#nanoTime()} at that moment.
     */
    default void onConnected(long nanoTime) {
    }

    /**
     * An established connection ended. {@code closeCode} is the server's close code (SSE: the
     * {@code code} of its {@code event: close}, the reason then {@code {"retryMs":N}} as on a
     * WebSocket), or 1006 when the connection ended without one (reset, silence, ...).
     */
    default void onDisconnected(int closeCode, String reason) {
    }

    /** An attempt failed before the WebSocket (or SSE stream) was open (refused, timed out, HTTP error). */
    default void onConnectFailed(Throwable cause) {
    }

    /**
     * The server refused the credentials: 401 ({@code missing_token}, {@code invalid_token}) or 403
     * ({@code topic_not_allowed}, {@code origin_not_allowed}, ...) to the upgrade or the SSE request;
     * {@code error} is the answer's code, or null when it had none. Sending the same token again
     * cannot succeed, so the client retries (after the usual backoff) only when its
     * {@code accessToken} supplier then gives a different token; otherwise it stops for good
     * ({@link ClientState#CLOSED}), right after this call or at that next attempt.
     * {@link #onConnectFailed} is called too.
     */
    default void onAccessDenied(int status, String error) {
    }

    /** The server answered an in-band command with an {@code error} frame. */
    default void onError(String code, String message) {
    }
}
