package io.pushd.client.testing;

import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Publishes with the JDK HTTP client. */
public final class Http {

    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private Http() {
    }

    /** Publishes {@code json} and returns the event's ID; fails unless the server answers 201. */
    public static EventId publish(int port, String topic, String json) {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/topics/" + topic + "/events"))
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build();
        try {
            HttpResponse<String> r = CLIENT.send(req, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 201) {
                throw new IllegalStateException("publish answered " + r.statusCode() + ": " + r.body());
            }
            return EventId.parse(ProtocolCodec.mapper().readTree(r.body()).path("id").asText());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("publish failed: " + req.uri(), e);
        }
    }
}
