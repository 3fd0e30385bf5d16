package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.util.concurrent.ExecutionException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client the popular recipes write: {@code new WebSocket('/v1/live?after=' + lastId)} with no
 * topic, storing {@code id} of every message it receives, whatever its type, and sending it back.
 * With {@code server.defaultTopic} it must get every event exactly once across restarts.
 */
class PlaybookClientTest {

    private static final String TOPIC = "feed";

    @TempDir
    Path dataDir;
    PushServer server;
    int port;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private void startServer() throws Exception {
        ServerConfig c = TestServers.config(dataDir);
        server = TestServers.start(c.withServer(c.server().withPort(port).withDefaultTopic(TOPIC)));
        port = server.port(); // the first start picks a free port; the restarts take the same one
    }

    private void publish(int from, int to) {
        for (int i = from; i <= to; i++) {
            assertThat(Http.publish(port, TOPIC, "{\"n\":" + i + "}").status()).isEqualTo(201);
        }
    }

    /** The recipe, in Java: one socket, {@code lastId = msg.id} for every message. */
    final class PlaybookClient implements WebSocket.Listener {
        String lastId = "";
        final List<JsonNode> events = new ArrayList<>();
        final BlockingQueue<JsonNode> inbox = new LinkedBlockingQueue<>();
        final CompletableFuture<Integer> closed = new CompletableFuture<>();
        private final StringBuilder partial = new StringBuilder();

        WebSocket connect() throws Exception {
            return HttpClient.newHttpClient().newWebSocketBuilder()
                    .buildAsync(URI.create("ws://127.0.0.1:" + port + "/v1/live?after=" + lastId), this)
                    .get(10, TimeUnit.SECONDS);
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                try {
                    inbox.add(ProtocolCodec.mapper().readTree(partial.toString()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                partial.setLength(0);
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
            closed.complete(statusCode);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            closed.complete(-1);
        }

        /** Takes messages until {@code n} events arrived, storing every message's id. */
        void receiveEvents(int n) throws InterruptedException {
            int before = events.size();
            while (events.size() < before + n) {
                JsonNode m = inbox.poll(10, TimeUnit.SECONDS);
                assertThat(m).as("a message within 10 s").isNotNull();
                take(m);
            }
        }

        /** Takes the first message of a connection: a subscribed frame, whose id is stored too. */
        void receiveSubscribed() throws InterruptedException {
            JsonNode m = inbox.poll(10, TimeUnit.SECONDS);
            assertThat(m).isNotNull();
            assertThat(m.path("type").asText()).isEqualTo("subscribed");
            assertThat(m.path("topic").asText()).isEqualTo(TOPIC);
            take(m);
        }

        private void take(JsonNode m) {
            if (m.path("type").asText().equals("event")) {
                events.add(m);
            }
            lastId = m.get("id") == null ? "undefined" : m.get("id").asText(); // what JS would send
        }
    }

    @Test
    void storingTheIdOfEveryMessageGetsEveryEventExactlyOnceAcrossAGracefulAndAnAbruptRestart() throws Exception {
        startServer();
        String epoch = server.epoch();
        PlaybookClient client = new PlaybookClient();

        client.connect();
        client.receiveSubscribed(); // an empty topic: the only id it has is the subscribed frame's
        assertThat(client.lastId).isEqualTo(epoch + "-0");

        server.drain(); // graceful: 1012
        assertThat(client.closed.get(15, TimeUnit.SECONDS)).isEqualTo(1012);
        client = reconnectAfterRestart(client, 1, 3);
        publish(4, 6);
        client.receiveEvents(3);

        server.close(); // abrupt: no close frame, the socket just ends
        client.closed.get(15, TimeUnit.SECONDS);
        client = reconnectAfterRestart(client, 7, 9);
        publish(10, 10);
        client.receiveEvents(1);

        assertThat(client.events).extracting(m -> m.path("data").path("n").asInt())
                .containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        assertThat(client.events).extracting(m -> m.path("id").asText())
                .doesNotHaveDuplicates().allMatch(id -> id.startsWith(epoch + "-"));
        assertThat(client.inbox).isEmpty();
    }

    /** Restarts on the same data and port, publishes while the client is away, reconnects with its last id. */
    private PlaybookClient reconnectAfterRestart(PlaybookClient old, int from, int to) throws Exception {
        startServer();
        publish(from, to);
        PlaybookClient next = new PlaybookClient();
        next.lastId = old.lastId;
        next.events.addAll(old.events);
        next.connect();
        next.receiveSubscribed();
        assertThat(next.lastId).as("subscribed.id is the requested position").isEqualTo(old.lastId);
        next.receiveEvents(to - from + 1);
        return next;
    }

    @Test
    void aLiveOnlyConnectToAWrittenTopicStartsAtItsHead() throws Exception {
        startServer();
        publish(1, 4);
        PlaybookClient client = new PlaybookClient();

        client.connect();
        client.receiveSubscribed();

        assertThat(client.lastId).isEqualTo(server.epoch() + "-4");
    }

    @Test
    void aResetAfterSubscribedMovesTheStoredIdToTheHead() throws Exception {
        startServer();
        publish(1, 2);
        PlaybookClient client = new PlaybookClient();
        client.lastId = "zz0other-7";

        client.connect();
        client.receiveSubscribed();
        assertThat(client.lastId).isEqualTo("zz0other-7"); // the request, so a drop here gets the reset again
        JsonNode reset = client.inbox.poll(10, TimeUnit.SECONDS);
        client.take(reset);

        assertThat(reset.path("reason").asText()).isEqualTo("unknown_epoch");
        assertThat(client.lastId).isEqualTo(server.epoch() + "-2");
    }

    @Test
    void withoutADefaultTopicAQueryWithoutTopicIsStillRefused() throws Exception {
        server = TestServers.start(dataDir);
        port = server.port();

        ExecutionException e = org.assertj.core.api.Assertions.catchThrowableOfType(ExecutionException.class,
                () -> new PlaybookClient().connect());

        assertThat(e.getCause()).isInstanceOf(WebSocketHandshakeException.class);
        assertThat(((WebSocketHandshakeException) e.getCause()).getResponse().statusCode()).isEqualTo(400);
    }
}
