package io.pushd.server.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.ProtocolCodec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Plain HTTP calls with the JDK client, for tests. */
public final class Http {

    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** Status and parsed JSON body (null when the body is not JSON). */
    public record Response(int status, JsonNode json, String body, HttpResponse<String> raw) {
        public String header(String name) {
            return raw.headers().firstValue(name).orElse(null);
        }
    }

    private Http() {
    }

    public static Response publish(int port, String topic, String json) {
        return publish(port, topic, json, null);
    }

    public static Response publish(int port, String topic, String json, String idempotencyKey) {
        HttpRequest.Builder b = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/v1/topics/" + topic + "/events"))
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (idempotencyKey != null) {
            b.header("Idempotency-Key", idempotencyKey);
        }
        return send(b.build());
    }

    public static Response get(int port, String path) {
        return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).GET().build());
    }

    public static Response send(HttpRequest request) {
        try {
            HttpResponse<String> r = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
            JsonNode json = null;
            try {
                json = r.body().isEmpty() ? null : ProtocolCodec.mapper().readTree(r.body());
            } catch (Exception notJson) {
                // leave null
            }
            return new Response(r.statusCode(), json, r.body(), r);
        } catch (Exception e) {
            throw new IllegalStateException("HTTP call failed: " + request.uri(), e);
        }
    }
}
