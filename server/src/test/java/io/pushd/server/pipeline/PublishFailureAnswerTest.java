package io.pushd.server.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.history.NotDurableException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What a publish whose batch could not be synced is answered. */
class PublishFailureAnswerTest {

    @Test
    void aFailedSyncIs503WithRetryAfterAndSaysTheEventMayBeStoredAndToRetryWithTheSameKey() throws Exception {
        FullHttpResponse res = PublishRoute.failed(new NotDurableException(
                new UncheckedIOException(new IOException("msync: input/output error"))));
        try {
            assertThat(res.status().code()).isEqualTo(503);
            assertThat(res.headers().get(HttpHeaderNames.RETRY_AFTER)).isNotBlank();
            JsonNode body = ProtocolCodec.mapper().readTree(res.content().toString(StandardCharsets.UTF_8));
            assertThat(body.get("error").asText()).isEqualTo("not_durable");
            assertThat(body.get("message").asText()).contains("may be stored").contains("same Idempotency-Key")
                    .doesNotContain("input/output"); // the cause stays in the log
        } finally {
            res.release();
        }
    }
}
