package io.pushd.server.session;

import io.netty.util.concurrent.ScheduledFuture;
import io.pushd.protocol.ClientMessage;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.ErrorCodes;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.ProtocolException;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.admission.AdmissionControl;
import io.pushd.server.auth.AccessDecision;
import io.pushd.server.auth.Grant;
import io.pushd.server.auth.Redaction;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.replay.TopicSubscription;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection, whatever its transport: admission, its subscriptions, the in-band
 * commands, the slow-consumer guard and how it ends ({@link #close}). It writes through a
 * {@link SessionSink}; the transport's handler feeds it ({@link #open}, {@link #onMessage},
 * {@link #onWritabilityChanged}, {@link #onDisconnected}). All methods but {@link #close} and
 * {@link #abort} run on the sink's event loop.
 */
public final class Session {

    private static final Logger log = LoggerFactory.getLogger(Session.class);

    private final SessionSink sink;
    private final SessionContext context;
    /** Sized for one topic (a 2-slot table instead of 16): most connections follow one. */
    private final Map<String, TopicSubscription> subscriptions = new LinkedHashMap<>(2);
    private final CompletableFuture<Void> disconnected = new CompletableFuture<>();
    private String admittedIp; // non-null once admission counted this session
    private ScheduledFuture<?> slowConsumerCheck;
    private Grant grant = Grant.anonymous(false);
    private String countedSubject; // the subject admission counted (null in mode none)
    private ScheduledFuture<?> expiry;

    public Session(SessionSink sink, SessionContext context) {
        this.sink = sink;
        this.context = context;
    }

    /** Where this session writes (tests look at its connection through it). */
    public SessionSink sink() {
        return sink;
    }

    /**
     * The transport is established (a WebSocket upgrade completed). Closes a session that comes
     * too late (the drain began) or over a limit, with a retry hint; otherwise admits it and
     * starts the {@code initial} subscriptions. Returns whether it was admitted.
     */
    public boolean open(String clientIp, List<ClientMessage.Subscribe> initial) {
        return open(clientIp, null, initial);
    }

    /**
     * {@link #open(String, List)} for a session whose upgrade {@code AccessControl.subscribe}
     * allowed: the grant decides its in-band subscribes, counts against the per-subject limit
     * (mode jwt) and ends the session with 4001 when the token expires without a refresh.
     *
     * @param granted null: auth.mode none (anyone subscribes to anything)
     */
    public boolean open(String clientIp, Grant granted, List<ClientMessage.Subscribe> initial) {
        boolean tokens = granted != null && context.access().tokensRequired();
        if (granted != null) {
            grant = granted;
        }
        if (!context.lifecycle().isServing()) {
            // Opened while the server starts (its port opens before the warm-ups), or just as the
            // drain began (it missed the drain's snapshot): close it the way the drain does, with
            // the hint that brings it back once this server (or its restart) serves.
            close(CloseCode.SERVICE_RESTART, context.returns().hint());
            return false;
        }
        // Over a limit the upgrade has still completed, so a browser sees the close code and the hint.
        String subject = tokens ? grant.subject() : null;
        AdmissionControl.Decision decision = context.admission().admit(clientIp, subject);
        if (!decision.admitted()) {
            context.metrics().handshake(switch (decision.limit()) {
                case CONNECTIONS -> ServerMetrics.Handshake.REFUSED_CONNECTIONS;
                case PER_IP -> ServerMetrics.Handshake.REFUSED_PER_IP;
                case HANDSHAKE_RATE -> ServerMetrics.Handshake.REFUSED_RATE;
                case STARTUP_RAMP -> ServerMetrics.Handshake.REFUSED_STARTUP_RAMP;
                case PER_SUBJECT -> ServerMetrics.Handshake.REFUSED_PER_SUBJECT;
            }, sink.transport());
            log.debug("[{}] refused ({}), retry in {} ms", sink.id(), decision.reason(), decision.retryMs());
            close(CloseCode.TRY_AGAIN_LATER, decision.retryMs());
            return false;
        }
        admittedIp = clientIp;
        countedSubject = subject;
        context.metrics().handshake(ServerMetrics.Handshake.ADMITTED, sink.transport());
        context.registry().add(this);
        scheduleExpiry();
        if (log.isDebugEnabled()) { // the id and the text cost a string or two per connection, kept for its life
            log.debug("[{}] upgraded from {}{}, {} topic(s)", sink.id(), clientIp,
                    subject == null ? "" : " as " + subject, initial == null ? 0 : initial.size());
        }
        if (initial != null) {
            for (ClientMessage.Subscribe s : initial) {
                subscribe(s);
            }
        }
        return true;
    }

    /** The transport's name ({@code websocket}, {@code sse}), for the connection gauges. */
    public String transport() {
        return sink.transport();
    }

    /** True while what the client says matters: admitted and not closing. */
    public boolean isListening() {
        return admittedIp != null && !sink.isClosing();
    }

    /** A text message from the client (a subscribe or unsubscribe command). */
    public void onMessage(String text) {
        if (!isListening()) {
            return; // refused or closing: nothing the client says matters any more
        }
        ClientMessage message;
        try {
            message = ProtocolCodec.decodeClient(text);
        } catch (ProtocolException e) {
            sendError(e.code(), Redaction.text(e.getMessage()));
            return;
        }
        int maxTopics = context.limits().maxTopicsPerConnection();
        if (message instanceof ClientMessage.Subscribe s) {
            if (!context.access().maySubscribe(grant, s.topic())) {
                // a client that sent its token as the topic gets it back masked (Redaction.text)
                sendError(new ServerMessage.Error(ErrorCodes.TOPIC_NOT_ALLOWED, "topic not in the token's topics",
                        Redaction.text(s.topic())));
            } else if (subscriptions.containsKey(s.topic())) {
                sendError(ErrorCodes.BAD_MESSAGE, "already subscribed to '" + Redaction.text(s.topic()) + "'");
            } else if (subscriptions.size() >= maxTopics) {
                sendError(ErrorCodes.TOO_MANY_TOPICS, "too many topics (expected: at most " + maxTopics + ")");
            } else {
                subscribe(s);
            }
        } else if (message instanceof ClientMessage.Unsubscribe u) {
            TopicSubscription sub = subscriptions.remove(u.topic());
            if (sub == null) {
                sendError(ErrorCodes.BAD_MESSAGE, "not subscribed to '" + Redaction.text(u.topic()) + "'");
            } else {
                sub.close();
            }
        } else if (message instanceof ClientMessage.Auth a) {
            refresh(a.token());
        }
    }

    /**
     * An in-band token refresh: a new token of the same subject replaces the grant and its expiry;
     * subscriptions it no longer covers end with an error frame each. A refusal changes nothing.
     */
    private void refresh(String token) {
        AccessDecision d = context.access().refresh(token, grant.subject());
        if (!d.allowed()) {
            sendError(d.code(), d.message());
            return;
        }
        grant = d.grant();
        scheduleExpiry();
        Instant until = grant.expiresAt();
        sink.send(new ServerMessage.Authenticated(until == null ? null : until.toEpochMilli()));
        for (Iterator<Map.Entry<String, TopicSubscription>> it = subscriptions.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, TopicSubscription> e = it.next();
            if (!context.access().maySubscribe(grant, e.getKey())) {
                it.remove();
                e.getValue().close();
                sink.send(new ServerMessage.Error(ErrorCodes.TOPIC_NOT_ALLOWED,
                        "topic no longer in the token's topics: unsubscribed", e.getKey()));
            }
        }
        sink.flush();
        log.debug("[{}] token refreshed for {}", sink.id(), grant.subject());
    }

    /** (Re)arms the 4001 close at the grant's expiry; none for a grant without one. */
    private void scheduleExpiry() {
        if (expiry != null) {
            expiry.cancel(false);
            expiry = null;
        }
        Instant until = grant.expiresAt();
        if (until == null) {
            return;
        }
        long delay = Math.max(0, Duration.between(Instant.now(), until).toMillis());
        expiry = sink.eventLoop().schedule(() -> {
            expiry = null;
            log.debug("[{}] token of {} expired", sink.id(), grant.subject());
            close(CloseCode.TOKEN_EXPIRED, "token expired");
        }, delay, TimeUnit.MILLISECONDS);
    }

    private void subscribe(ClientMessage.Subscribe s) {
        TopicSubscription sub = new TopicSubscription(s.topic(), sink, context.history(), context.hub(),
                context.metrics(), this::fail);
        subscriptions.put(s.topic(), sub);
        sub.start(s.after());
    }

    private void sendError(String code, String message) {
        sendError(new ServerMessage.Error(code, message));
    }

    private void sendError(ServerMessage.Error error) {
        sink.send(error);
        sink.flush();
    }

    /**
     * The sink's writability changed. Subscriptions already stopped writing live events while it
     * is not writable (they catch up from the store later), so memory is bounded; a reader that
     * stays stuck for {@code limits.slowConsumerTimeout} is closed so it resumes elsewhere.
     */
    public void onWritabilityChanged() {
        if (sink.isWritable()) {
            cancelSlowConsumerCheck();
            for (TopicSubscription sub : subscriptions.values()) {
                sub.onWritable();
            }
        } else if (slowConsumerCheck == null && admittedIp != null) {
            long timeout = context.limits().slowConsumerTimeout().toMillis();
            slowConsumerCheck = sink.eventLoop().schedule(() -> {
                slowConsumerCheck = null;
                if (!sink.isWritable()) {
                    log.debug("[{}] slow consumer: unwritable for {} ms", sink.id(), timeout);
                    context.metrics().slowConsumerClosed();
                    close(CloseCode.TRY_AGAIN_LATER, context.hints().single());
                }
            }, timeout, TimeUnit.MILLISECONDS);
        }
    }

    private void cancelSlowConsumerCheck() {
        if (slowConsumerCheck != null) {
            slowConsumerCheck.cancel(false);
            slowConsumerCheck = null;
        }
    }

    /** The connection is gone: stop the subscriptions and give back the admission slot. */
    public void onDisconnected() {
        for (TopicSubscription sub : subscriptions.values()) {
            sub.close();
        }
        subscriptions.clear();
        cancelSlowConsumerCheck();
        if (expiry != null) {
            expiry.cancel(false);
            expiry = null;
        }
        if (admittedIp != null) {
            context.admission().release(admittedIp, countedSubject);
            admittedIp = null;
        }
        context.registry().remove(this);
        if (log.isDebugEnabled()) {
            log.debug("[{}] disconnected", sink.id());
        }
        disconnected.complete(null);
    }

    /** A failure of ours (a subscription that cannot go on): close with 1011 so the client resumes elsewhere. */
    public void fail(Throwable cause) {
        log.warn("[{}] unexpected error", sink.id(), cause);
        close(CloseCode.INTERNAL_ERROR, "internal error");
    }

    /** Ends the session with {@code code}; only the first close counts. Any thread. */
    public void close(CloseCode code, String reason) {
        sink.close(code, reason);
    }

    /** Ends the session with {@code code} and a {@code retryMs} hint. Any thread. */
    public void close(CloseCode code, long retryMs) {
        sink.close(code, CloseCode.retryReason(retryMs));
    }

    /** Drops the connection without a close handshake. Any thread. */
    public void abort() {
        sink.abort();
    }

    /** Completes once the connection is gone. */
    CompletableFuture<Void> closed() {
        return disconnected;
    }
}
