package io.pushd.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.SimpleChannelInboundHandler;
import io.pushd.protocol.CloseCode;
import java.io.IOException;
import java.net.URI;
import java.util.OptionalLong;

/**
 * One connection attempt of a {@link PushClient} over one transport ({@link LiveConnection}:
 * WebSocket, {@link SseConnection}: server-sent events): builds the pipeline, turns what arrives
 * into calls on the client, and remembers how the connection ended, in the WebSocket's terms
 * (close code and reason), so the client decides the same way whichever transport ended.
 *
 * @param <I> what the last handler of the pipeline reads
 */
abstract class ClientConnection<I> extends SimpleChannelInboundHandler<I> {

    private static final ObjectMapper JSON = new ObjectMapper();

    final PushClient client;
    final URI uri;
    final PushClientOptions options;
    Channel channel;
    /** The transport is open (WebSocket handshake completed, or a 200 event stream began). */
    boolean opened;
    /** When every topic of this connection was subscribed; 0 until then. */
    long subscribedNanos;
    /** Code and reason the server ended it with (or ours when we ended it), -1: none. */
    int closeCode = -1;
    String closeReason;
    /** Why the connection ended without a close code, for logs and onConnectFailed. */
    Throwable failure;
    String endNote;
    /** The token this attempt sent (never logged), null: none. */
    String sentToken;
    /** The HTTP status of an upgrade (SSE: request) the server answered with an error, 0: none. */
    int refusedStatus;
    /** The {@code error} code of that answer's JSON body, or null. */
    String refusedError;

    ClientConnection(PushClient client, URI uri, PushClientOptions options, boolean autoRelease) {
        super(autoRelease);
        this.client = client;
        this.uri = uri;
        this.options = options;
    }

    abstract void initPipeline(ChannelPipeline p);

    /** {@link PushClient#close()}: end it the transport's polite way, then the socket. */
    abstract void closedByClient();

    /** An in-band command (e.g. an auth refresh); false where the transport cannot send (SSE is one-way). */
    boolean sendText(String text) {
        return false;
    }

    /**
     * The server's suggested delay before the next attempt, if it gave one: the {@code retryMs}
     * of a 1012/1013 close.
     */
    OptionalLong retryHint() {
        return opened && CloseCode.carriesRetryHint(closeCode) ? CloseCode.parseRetryMs(closeReason) : OptionalLong.empty();
    }

    String id() {
        return channel == null ? "-" : channel.id().asShortText();
    }

    /** Why it ended when no close code says so. */
    String endReason() {
        if (endNote != null) {
            return endNote;
        }
        return failure != null ? String.valueOf(failure.getMessage()) : "connection lost";
    }

    /** The server denied the credentials (401) or the access they give (403): retrying the same token cannot help. */
    boolean accessDenied() {
        return !opened && (refusedStatus == 401 || refusedStatus == 403);
    }

    /** Remembers an error answer before the transport opened: its status and the body's {@code error} code. */
    void refused(int status, String body) {
        refusedStatus = status;
        refusedError = errorCode(body);
    }

    /** {@code error} of a JSON error body ({@code {"error":CODE,"message":TEXT}}), or null. */
    static String errorCode(String body) {
        if (body == null || body.isBlank()) {
            return null;
        }
        try {
            JsonNode code = JSON.readTree(body).get("error");
            return code != null && code.isTextual() ? code.asText() : null;
        } catch (IOException | RuntimeException e) {
            return null; // not our server's answer (a proxy's HTML page): the status alone tells
        }
    }

    /**
     * A failure on a message over {@code maxFrameBytes}: an event larger than this client takes,
     * which every resume from the same ID meets again.
     */
    static boolean tooLargeMessage(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof io.netty.handler.codec.TooLongFrameException
                    || t instanceof SseParser.MessageTooLargeException
                    || (t instanceof io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException c
                            && c.closeStatus().code() == 1009)) {
                return true;
            }
        }
        return false;
    }

    void failed(Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
        if (tooLargeMessage(cause)) {
            // told here: the decoder may have closed the channel already, so the close does not know why
            client.onTooLargeMessage(this, cause);
        }
    }
}
