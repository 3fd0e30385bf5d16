package io.pushd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pushd.protocol.EventId;
import java.net.InetAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class PushClientOptionsTest {

    @Test
    void defaultsAreTheProtocolsRecommendation() {
        PushClientOptions o = PushClientOptions.builder("localhost", 8080).topic("news").build();
        assertThat(o.baseDelay()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.maxDelay()).isEqualTo(Duration.ofSeconds(60));
        assertThat(o.silenceTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(o.localAddress()).isNull();
        assertThat(o.topics()).containsEntry("news", null);
        assertThat(o.backoff()).isInstanceOf(ExponentialBackoff.class);
    }

    @Test
    void invalidValuesAreRefusedNamingTheSettingAndTheExpectedRange() {
        PushClientOptions.Builder b = PushClientOptions.builder("localhost", 8080);
        assertThatThrownBy(() -> b.maxDelay(Duration.ZERO)).hasMessage("maxDelay: PT0S (expected: > 0)");
        assertThatThrownBy(() -> b.silenceTimeout(Duration.ofSeconds(-1)))
                .hasMessage("silenceTimeout: PT-1S (expected: > 0)");
        assertThatThrownBy(() -> b.topic("bad topic")).hasMessageStartingWith("invalid topic 'bad topic'");
        assertThatThrownBy(b::build).hasMessage("topics: none (expected: at least one)");
        assertThatThrownBy(() -> PushClientOptions.builder("localhost", 0)).hasMessage("port: 0 (expected: 1-65535)");
        assertThatThrownBy(() -> PushClientOptions.builder(" ", 80))
                .hasMessage("host:   (expected: a host name or address)");
        assertThatThrownBy(() -> b.topic("t").baseDelay(Duration.ofSeconds(10)).maxDelay(Duration.ofSeconds(5)).build())
                .hasMessage("maxDelay: PT5S (expected: >= baseDelay PT10S)");
    }

    @Test
    void builtOptionsDoNotChangeWhenTheBuilderOrACopyChanges() throws Exception {
        PushClientOptions.Builder b = PushClientOptions.builder("localhost", 8080).topic("a");
        PushClientOptions o = b.build();
        b.topic("b");
        PushClientOptions copy = o.toBuilder().topic("c", EventId.parse("e1-5"))
                .localAddress(InetAddress.getByName("127.0.0.2")).build();
        assertThat(o.topics()).containsOnlyKeys("a");
        assertThat(copy.topics()).containsOnlyKeys("a", "c");
        assertThat(copy.topics().get("c")).isEqualTo(EventId.parse("e1-5"));
        assertThat(copy.localAddress()).isEqualTo(InetAddress.getByName("127.0.0.2"));
        assertThatThrownBy(() -> o.topics().put("x", null)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void theLiveUriAsksForEveryTopicFromItsStartingIdOrLive() {
        try (ClientResources r = ClientResources.create(1)) {
            PushClient c = r.newClient(PushClientOptions.builder("127.0.0.1", 8080)
                    .topic("a").topic("b", EventId.parse("e1-7")).build(), new io.pushd.client.testing.Recorder());
            assertThat(c.uri().toString()).isEqualTo("ws://127.0.0.1:8080/v1/live?topic=a@&topic=b@e1-7");
            assertThat(c.state()).isEqualTo(ClientState.NEW);
        }
    }

    @Test
    void overSseTheSameTopicsAndIdsGoInTheQueryOfGetV1SseAndToBuilderKeepsTheTransport() {
        PushClientOptions o = PushClientOptions.builder("127.0.0.1", 8080).transport(Transport.SSE)
                .topic("a").topic("b", EventId.parse("e1-7")).build();
        assertThat(PushClientOptions.builder("h", 1).topic("a").build().transport()).isEqualTo(Transport.WEBSOCKET);
        assertThat(o.toBuilder().build().transport()).isEqualTo(Transport.SSE);
        assertThatThrownBy(() -> PushClientOptions.builder("h", 1).transport(null))
                .isInstanceOf(IllegalArgumentException.class);
        try (ClientResources r = ClientResources.create(1)) {
            PushClient c = r.newClient(o, new io.pushd.client.testing.Recorder());
            assertThat(c.uri().toString()).isEqualTo("http://127.0.0.1:8080/v1/sse?topic=a@&topic=b@e1-7");
        }
    }
}
