package io.pushd.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.pushd.protocol.ClientMessage;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.ServerMessage;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows a fixed set of topics on one server over one WebSocket (or one server-sent event stream,
 * see {@link PushClientOptions.Builder#transport}), and keeps following them across disconnects: it remembers the last ID per topic, reconnects with {@code topic=NAME@ID} after a
 * backoff (see {@link Backoff}), and delivers each event once and in order to its
 * {@link PushListener}.
 *
 * <p>Created by {@link ClientResources#newClient}; pinned to one event loop, where all its state
 * changes and all listener calls happen. The public methods are thread-safe.
 */
public final class PushClient implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PushClient.class);
    /** RFC 6455 "abnormal closure": the connection ended without a close frame. */
    public static final int ABNORMAL_CLOSURE = 1006;

    private final ClientResources resources;
    private final EventLoop loop;
    private final PushClientOptions options;
    private final PushListener listener;
    private final Map<String, TopicCursor> cursors;
    private final InetSocketAddress remote;
    private final AtomicReference<ClientState> state = new AtomicReference<>(ClientState.NEW);

    // Event loop only.
    private ClientConnection<?> current;
    private ScheduledFuture<?> pendingAttempt;
    private int unconfirmedTopics;
    /** The token the server last refused (401/403), so it is not sent again; null: none refused. */
    private String refusedToken;
    private boolean refusedWithoutToken;
    /** The supplier threw at this attempt (then no token is sent, and a 401 is not a reason to stop). */
    private boolean supplierThrew;

    // Written on the event loop only (so ++ is safe), readable from any thread.
    private volatile int failedAttempts;
    /** When a 4001 last made the client reconnect at once (event loop). */
    private long lastTokenExpiredNanos;
    /**
     * How long a connection must have stayed up after subscribing for its close to count as a
     * fresh start (the next reconnect: attempt 0, random 0-5 s) rather than one more failure.
     */
    static final Duration STABLE = Duration.ofSeconds(3);
    private volatile long connectAttempts;
    private volatile long connects;
    private volatile long eventsReceived;
    private volatile long duplicatesDropped;
    private volatile long epochMismatchesDropped;
    private volatile long gaps;
    private volatile long resets;
    private volatile int lastCloseCode = -1;
    private volatile String lastCloseReason;
    private volatile long lastConnectedNanos;

    PushClient(ClientResources resources, EventLoop loop, PushClientOptions options, PushListener listener) {
        if (options == null || listener == null) {
            throw new IllegalArgumentException("options and listener are required");
        }
        this.resources = resources;
        this.loop = loop;
        this.options = options;
        this.listener = listener;
        Map<String, TopicCursor> c = new LinkedHashMap<>();
        options.topics().forEach((topic, start) -> c.put(topic, new TopicCursor(topic, start)));
        this.cursors = Collections.unmodifiableMap(c);
        // Unresolved: the name is looked up again on every attempt, so a moved server is found.
        this.remote = InetSocketAddress.createUnresolved(options.host(), options.port());
    }

    /** Connects; from then on the client reconnects by itself until {@link #close()}. */
    public PushClient start() {
        if (!state.compareAndSet(ClientState.NEW, ClientState.CONNECTING)) {
            throw new IllegalStateException("start: client is " + state.get() + " (expected: NEW)");
        }
        loop.execute(this::attempt);
        return this;
    }

    /**
     * Stops for good: cancels a pending attempt and closes the connection with 1000. Does not block;
     * {@link #state()} is {@link ClientState#CLOSED} when this returns.
     */
    @Override
    public void close() {
        if (state.getAndSet(ClientState.CLOSED) == ClientState.CLOSED) {
            return;
        }
        resources.forget(this);
        try {
            loop.execute(() -> {
                if (pendingAttempt != null) {
                    pendingAttempt.cancel(false);
                    pendingAttempt = null;
                }
                if (current != null) {
                    current.closedByClient();
                }
            });
        } catch (RejectedExecutionException e) {
            // the loops are already stopping: so is the channel
        }
    }

    /**
     * Sends a new token in band ({@code {"type":"auth","token":…}}) on the open connection, so a
     * long session outlives its first token (call it at about 80 % of the token's lifetime); the
     * server answers {@code authenticated}, or an {@code invalid_token} error (to
     * {@link PushListener#onError}) and the old token stays. Reconnects use the
     * {@code accessToken} supplier, so it should return the new token too. Returns false when no
     * connection is open (nothing sent). Any thread.
     */
    public boolean refresh(String token) {
        if (token == null || token.isEmpty()) {
            throw new IllegalArgumentException("token: empty");
        }
        String frame = ProtocolCodec.encode(new ClientMessage.Auth(token));
        if (loop.inEventLoop()) {
            return current != null && current.sendText(frame);
        }
        java.util.concurrent.CompletableFuture<Boolean> sent = new java.util.concurrent.CompletableFuture<>();
        try {
            loop.execute(() -> sent.complete(current != null && current.sendText(frame)));
        } catch (RejectedExecutionException e) {
            return false;
        }
        return sent.join();
    }

    public ClientState state() {
        return state.get();
    }

    public PushClientOptions options() {
        return options;
    }

    /** The ID the next connection resumes after, or null (live only, nothing seen yet). */
    public EventId lastId(String topic) {
        TopicCursor c = cursors.get(topic);
        if (c == null) {
            throw new IllegalArgumentException("topic '" + topic + "' is not followed by this client");
        }
        return c.last();
    }

    /** Snapshot of every topic's resume ID (null values: live only, nothing seen yet). */
    public Map<String, EventId> lastIds() {
        Map<String, EventId> m = new LinkedHashMap<>();
        cursors.forEach((t, c) -> m.put(t, c.last()));
        return m;
    }

    /** TCP connects started, including the first. */
    public long connectAttempts() {
        return connectAttempts;
    }

    /** Connections opened (WebSocket handshakes, or SSE streams answered 200). {@code connects() - 1} is the number of reconnects. */
    public long connects() {
        return connects;
    }

    /** Failed attempts since the last healthy connection (one whose every {@code subscribed} arrived). */
    public int failedAttempts() {
        return failedAttempts;
    }

    public long eventsReceived() {
        return eventsReceived;
    }

    /** Events not newer than the last one of their topic, dropped. The server never sends them; a guard. */
    public long duplicatesDropped() {
        return duplicatesDropped;
    }

    /** Events from another epoch without a reset before them, dropped. Also a guard. */
    public long epochMismatchesDropped() {
        return epochMismatchesDropped;
    }

    /** Events delivered whose sequence skipped a number (never expected). */
    public long gaps() {
        return gaps;
    }

    public long resets() {
        return resets;
    }

    /** Close code of the last connection that ended ({@value #ABNORMAL_CLOSURE} without close frame), -1 before. */
    public int lastCloseCode() {
        return lastCloseCode;
    }

    public String lastCloseReason() {
        return lastCloseReason;
    }

    /** {@link System#nanoTime()} of the last completed handshake, 0 before the first. */
    public long lastConnectedNanos() {
        return lastConnectedNanos;
    }

    @Override
    public String toString() {
        return "PushClient[" + options.host() + ":" + options.port() + " " + cursors.keySet() + " " + state.get() + "]";
    }

    // ---- event loop from here on ----

    /** Moves to {@code next} unless closed; the only way the state changes, besides close(). */
    private boolean advance(ClientState next) {
        for (;;) {
            ClientState s = state.get();
            if (s == ClientState.CLOSED) {
                return false;
            }
            if (state.compareAndSet(s, next)) {
                return true;
            }
        }
    }

    private void attempt() {
        pendingAttempt = null;
        if (!advance(ClientState.CONNECTING)) {
            return;
        }
        supplierThrew = false;
        String token = token();
        // a supplier that threw may work next time (its token service was away): that is no refusal to repeat
        if (!supplierThrew
                && (refusedToken != null ? refusedToken.equals(token) : refusedWithoutToken && token == null)) {
            // the supplier has nothing new: the same answer would come back (protocol/README.md, Reconnecting)
            log.warn("not reconnecting to {}:{}: the server refused this client's token and the supplier gave the "
                    + "same one again", options.host(), options.port());
            stopForGood();
            return;
        }
        refusedToken = null;
        refusedWithoutToken = false;
        connectAttempts++;
        unconfirmedTopics = cursors.size();
        cursors.values().forEach(TopicCursor::newConnection);
        URI uri = uri();
        ClientConnection<?> conn = options.transport() == Transport.SSE
                ? new SseConnection(this, uri, options, token) : new LiveConnection(this, uri, options, token);
        conn.sentToken = token;
        Bootstrap b = new Bootstrap()
                .group(loop)
                .channel(resources.channelType())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) options.connectTimeout().toMillis())
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        conn.initPipeline(ch.pipeline());
                    }
                });
        ChannelFuture f = options.localAddress() == null
                ? b.connect(remote)
                : b.connect(remote, new InetSocketAddress(options.localAddress(), 0));
        current = conn;
        conn.channel = f.channel();
        f.addListener(done -> {
            if (!done.isSuccess()) {
                conn.failed(done.cause());
                f.channel().close();
            }
            // One place decides what happens after any kind of end: refused, timed out, closed, dead.
            // Only now: a refused connect closes the channel before this future's listeners run, and
            // onClosed must know why (the listener would hear a bare ClosedChannelException).
            f.channel().closeFuture().addListener(closed -> onClosed(conn));
        });
    }

    /** The supplier's token for this attempt; a failing supplier sends none (the server then answers 401). */
    private String token() {
        if (options.accessToken() == null) {
            return null;
        }
        try {
            return options.accessToken().get();
        } catch (RuntimeException e) {
            log.warn("accessToken supplier threw; connecting without a token: {}", e.getClass().getSimpleName());
            supplierThrew = true;
            return null;
        }
    }

    /** Where the next attempt goes: the transport's path, each topic with the ID to resume after. */
    URI uri() {
        StringBuilder s = new StringBuilder(options.transport().scheme()).append("://");
        String host = options.host();
        s.append(host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host);
        s.append(':').append(options.port()).append(options.transport().path());
        char sep = '?';
        for (TopicCursor c : cursors.values()) {
            // NAME@ (empty) is live only; topic names and IDs need no escaping.
            s.append(sep).append("topic=").append(c.topic).append('@');
            if (c.last() != null) {
                s.append(c.last());
            }
            sep = '&';
        }
        return URI.create(s.toString());
    }

    void onOpen(ClientConnection<?> conn) {
        if (conn != current || !advance(ClientState.CONNECTED)) {
            conn.channel.close();
            return;
        }
        long now = System.nanoTime();
        connects++;
        lastConnectedNanos = now;
        log.debug("[{}] connected to {}", conn.id(), conn.uri);
        try {
            listener.onConnected(now);
        } catch (RuntimeException | Error e) { // a listener's AssertionError too
            listenerFailed("onConnected", e);
        }
    }

    void onText(ClientConnection<?> conn, String text) {
        if (conn != current || state.get() == ClientState.CLOSED) {
            return; // after close() nothing more reaches the listener, nor moves a cursor
        }
        ServerMessage m;
        try {
            m = ProtocolCodec.decodeServer(text);
        } catch (RuntimeException e) {
            log.warn("[{}] ignoring a frame that is not protocol v1: {}", conn.id(), e.getMessage());
            return;
        }
        if (m instanceof ServerMessage.Event e) {
            onEvent(conn, e);
        } else if (m instanceof ServerMessage.Subscribed s) {
            onSubscribed(conn, s);
        } else if (m instanceof ServerMessage.Reset r) {
            onReset(conn, r);
        } else if (m instanceof ServerMessage.Authenticated a) {
            log.debug("[{}] token accepted in band, session until {}", conn.id(), a.expiresAt());
        } else if (m instanceof ServerMessage.Error err) {
            log.warn("[{}] server error {}: {}", conn.id(), err.code(), err.message());
            try {
                listener.onError(err.code(), err.message());
            } catch (RuntimeException | Error ex) { // a listener's AssertionError too
                listenerFailed("onError", ex);
            }
        }
    }

    private void onEvent(ClientConnection<?> conn, ServerMessage.Event e) {
        TopicCursor c = cursor(conn, e.topic());
        if (c == null) {
            return;
        }
        switch (c.offer(e.id())) {
            case DUPLICATE:
                duplicatesDropped++;
                log.warn("[{}] dropped duplicate {} of '{}' (last {})", conn.id(), e.id(), e.topic(), c.last());
                return;
            case FOREIGN_EPOCH:
                epochMismatchesDropped++;
                log.warn("[{}] dropped {} of '{}': another epoch than {} and no reset", conn.id(), e.id(), e.topic(),
                        c.last());
                return;
            case ACCEPT_AFTER_GAP:
                gaps++;
                log.warn("[{}] gap before {} of '{}'", conn.id(), e.id(), e.topic());
                break;
            default:
                break;
        }
        eventsReceived++;
        try {
            listener.onEvent(e.topic(), e.id(), e.ts(), e.data());
        } catch (RuntimeException | Error ex) { // a listener's AssertionError too
            listenerFailed("onEvent", ex);
        }
    }

    private void onSubscribed(ClientConnection<?> conn, ServerMessage.Subscribed s) {
        TopicCursor c = cursor(conn, s.topic());
        if (c == null) {
            return;
        }
        c.subscribed(s.head(), s.epoch());
        if (!c.confirmed) {
            c.confirmed = true;
            if (--unconfirmedTopics == 0) {
                conn.subscribedNanos = System.nanoTime();
                log.debug("[{}] all {} topic(s) subscribed", conn.id(), cursors.size());
                try {
                    loop.schedule(() -> {
                        if (current == conn) {
                            failedAttempts = 0; // up and subscribed for STABLE: a fresh start
                        }
                    }, STABLE.toNanos(), TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException stopping) {
                    // the loops are going: so is this connection
                }
            }
        }
        try {
            listener.onSubscribed(s.topic(), s.head(), s.oldest());
        } catch (RuntimeException | Error ex) { // a listener's AssertionError too
            listenerFailed("onSubscribed", ex);
        }
    }

    private void onReset(ClientConnection<?> conn, ServerMessage.Reset r) {
        TopicCursor c = cursor(conn, r.topic());
        if (c == null) {
            return;
        }
        log.info("[{}] reset of '{}' to {} ({}), was at {}", conn.id(), r.topic(), r.id(), r.reason().wireName(),
                c.last());
        c.reset(r.id());
        resets++;
        try {
            listener.onReset(r.topic(), r.id(), r.reason());
        } catch (RuntimeException | Error ex) { // a listener's AssertionError too
            listenerFailed("onReset", ex);
        }
    }

    private TopicCursor cursor(ClientConnection<?> conn, String topic) {
        TopicCursor c = cursors.get(topic);
        if (c == null) {
            log.warn("[{}] ignoring a frame for topic '{}', which this client does not follow", conn.id(), topic);
        }
        return c;
    }

    /**
     * The connection met a message over {@code maxFrameBytes}: an event this client cannot take,
     * which every resume from the same ID meets again. The application is told (the connection
     * then closes, and the next attempts back off: it dies right after subscribing).
     */
    void onTooLargeMessage(ClientConnection<?> conn, Throwable cause) {
        if (state.get() == ClientState.CLOSED) {
            return; // (the connection may no longer be current: the decoder closed it before it threw)
        }
        String why = "an event larger than maxFrameBytes (" + options.maxFrameBytes() + " bytes): "
                + cause.getMessage() + "; retrying with backoff (raise maxFrameBytes to receive it)";
        log.warn("[{}] {}", conn.id(), why);
        try {
            listener.onError("message_too_big", why);
        } catch (RuntimeException | Error e) {
            listenerFailed("onError", e);
        }
    }

    private void onClosed(ClientConnection<?> conn) {
        if (conn != current) {
            return;
        }
        current = null;
        if (conn.opened) {
            int code = conn.closeCode >= 0 ? conn.closeCode : ABNORMAL_CLOSURE;
            String reason = conn.closeCode >= 0 ? conn.closeReason : conn.endReason();
            lastCloseCode = code;
            lastCloseReason = reason;
            try {
                listener.onDisconnected(code, reason);
            } catch (RuntimeException | Error e) { // a listener's AssertionError too
                listenerFailed("onDisconnected", e);
            }
        } else {
            try {
                listener.onConnectFailed(conn.failure != null ? conn.failure : new ClosedChannelException());
            } catch (RuntimeException | Error e) { // a listener's AssertionError too
                listenerFailed("onConnectFailed", e);
            }
        }
        if (conn.accessDenied()) {
            onAccessDenied(conn);
            if (state.get() == ClientState.CLOSED) {
                return;
            }
        }
        if (!advance(ClientState.WAITING)) {
            log.debug("[{}] closed; client closed, not reconnecting", conn.id());
            return;
        }
        long now = System.nanoTime();
        if (conn.opened && conn.closeCode == CloseCode.TOKEN_EXPIRED.code()
                && (lastTokenExpiredNanos == 0 || now - lastTokenExpiredNanos >= STABLE.toNanos())) {
            // a planned close: ask the supplier for a new token and resume at once, no backoff
            // (once per STABLE: a supplier that hands the expired token again gets the backoff)
            lastTokenExpiredNanos = now;
            log.debug("[{}] token expired; reconnecting now", conn.id());
            try {
                pendingAttempt = loop.schedule(this::attempt, 0, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                state.set(ClientState.CLOSED);
            }
            return;
        }
        if (conn.subscribedNanos != 0 && System.nanoTime() - conn.subscribedNanos >= STABLE.toNanos()) {
            // Only a connection that subscribed and then stayed up resets the backoff: one that
            // the server accepts and drops again at once (a replay that fails, a close code that
            // says "fix the client") must not make every client hammer it.
            failedAttempts = 0;
        }
        OptionalLong hint = conn.retryHint();
        int attempt = failedAttempts;
        Duration delay;
        try {
            delay = options.backoff().nextDelay(attempt, hint);
        } catch (RuntimeException e) {
            log.warn("[{}] backoff failed, using the maximum delay", conn.id(), e);
            delay = options.maxDelay();
        }
        failedAttempts = attempt + 1;
        log.debug("[{}] {}; next attempt in {} ms (attempt {}{})", conn.id(),
                conn.opened ? "closed: " + lastCloseCode + " " + lastCloseReason : "connect failed: " + conn.endReason(),
                delay.toMillis(), attempt, hint.isPresent() ? ", server hint " + hint.getAsLong() + " ms" : "");
        try {
            pendingAttempt = loop.schedule(this::attempt, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            state.set(ClientState.CLOSED); // the event loops are shutting down
        }
    }

    /**
     * 401/403: reported, and the same token is never sent again. Without a supplier there is no
     * other token, so the client stops now; with one, the next attempt stops unless it gets a new one.
     */
    private void onAccessDenied(ClientConnection<?> conn) {
        log.warn("[{}] {}:{} refused the credentials: {} {}", conn.id(), options.host(), options.port(),
                conn.refusedStatus, conn.refusedError == null ? "(no error code)" : conn.refusedError);
        try {
            listener.onAccessDenied(conn.refusedStatus, conn.refusedError);
        } catch (RuntimeException | Error e) { // a listener's AssertionError too
            listenerFailed("onAccessDenied", e);
        }
        if (options.accessToken() == null) {
            log.warn("[{}] not reconnecting: no accessToken supplier to get another token from", conn.id());
            stopForGood();
            return;
        }
        refusedToken = conn.sentToken;
        refusedWithoutToken = conn.sentToken == null;
    }

    /** As {@link #close()} from inside: CLOSED, forgotten by the resources, nothing pending. */
    private void stopForGood() {
        if (state.getAndSet(ClientState.CLOSED) != ClientState.CLOSED) {
            resources.forget(this);
        }
    }

    private void listenerFailed(String method, Throwable e) {
        log.warn("listener {} threw; ignored", method, e);
    }
}
