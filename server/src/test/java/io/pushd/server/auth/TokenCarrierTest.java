package io.pushd.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TokenCarrierTest {

    static final String JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl";

    static String token(TokenCarrier.Extraction e) {
        assertThat(e).isInstanceOf(BearerToken.class);
        return ((BearerToken) e).value();
    }

    static DenialReason denial(TokenCarrier.Extraction e) {
        assertThat(e).isInstanceOf(Denial.class);
        return ((Denial) e).reason();
    }

    @Test
    void aBearerHeaderCarriesTheToken() {
        assertThat(token(TokenCarrier.extract("Bearer " + JWT, "/v1/topics/a/events"))).isEqualTo(JWT);
        assertThat(token(TokenCarrier.extract("bearer   " + JWT + " ", null))).as("scheme case, spaces").isEqualTo(JWT);
        assertThat(token(TokenCarrier.extract("BEARER " + JWT, "/x"))).isEqualTo(JWT);
    }

    @Test
    void anAccessTokenQueryParameterCarriesTheToken() {
        assertThat(token(TokenCarrier.extract(null, "/v1/live?topic=a&access_token=" + JWT))).isEqualTo(JWT);
        assertThat(token(TokenCarrier.extract(null, "/v1/live?access_token=" + JWT + "&topic=a"))).isEqualTo(JWT);
        assertThat(token(TokenCarrier.extract(null, "/v1/live?access%5Ftoken=" + JWT.replace(".", "%2E"))))
                .as("percent-encoded name and value").isEqualTo(JWT);
        assertThat(token(TokenCarrier.extract(null, "/v1/live?topic=a;access_token=" + JWT))).isEqualTo(JWT);
    }

    @Test
    void noCarrierIsMissing() {
        assertThat(denial(TokenCarrier.extract(null, "/v1/live?topic=a"))).isEqualTo(DenialReason.MISSING);
        assertThat(denial(TokenCarrier.extract(null, null))).isEqualTo(DenialReason.MISSING);
        assertThat(denial(TokenCarrier.extract("", "/v1/live"))).isEqualTo(DenialReason.MISSING);
        assertThat(denial(TokenCarrier.extract(null, "/v1/live?ACCESS_TOKEN=" + JWT)))
                .as("names are case-sensitive, like every other parameter").isEqualTo(DenialReason.MISSING);
    }

    @Test
    void ambiguousOrBadCarriersAreMalformed() {
        assertThat(denial(TokenCarrier.extract("Bearer " + JWT, "/v1/live?access_token=" + JWT)))
                .as("two carriers").isEqualTo(DenialReason.MALFORMED);
        assertThat(denial(TokenCarrier.extract(null, "/v1/live?access_token=" + JWT + "&access_token=" + JWT)))
                .isEqualTo(DenialReason.MALFORMED);
        assertThat(denial(TokenCarrier.extract("Basic dXNlcjpwYXNz", null))).isEqualTo(DenialReason.MALFORMED);
        assertThat(denial(TokenCarrier.extract("Bearer", null))).isEqualTo(DenialReason.MALFORMED);
        assertThat(denial(TokenCarrier.extract("Bearer a b", null))).isEqualTo(DenialReason.MALFORMED);
        assertThat(denial(TokenCarrier.extract("Bearer a=b", null))).as("= only at the end").isEqualTo(DenialReason.MALFORMED);
        assertThat(denial(TokenCarrier.extract(null, "/v1/live?access_token="))).isEqualTo(DenialReason.MALFORMED);
        assertThat(denial(TokenCarrier.extract(null, "/v1/live?access_token=%zz"))).isEqualTo(DenialReason.MALFORMED);
        assertThat(denial(TokenCarrier.extract(null, "/v1/live?access_token=a+b"))).isEqualTo(DenialReason.MALFORMED);
        assertThat(denial(TokenCarrier.extract("Bearer " + "a".repeat(TokenCarrier.MAX_TOKEN_LENGTH + 1), null)))
                .isEqualTo(DenialReason.MALFORMED);
        assertThat(token(TokenCarrier.extract("Bearer abc==", null))).isEqualTo("abc==");
    }

    @Test
    void aBearerTokenNeverPrintsItsValue() {
        BearerToken t = BearerToken.of(JWT);
        assertThat(t.toString()).doesNotContain(JWT).isEqualTo("BearerToken[redacted]");
        assertThat(String.valueOf(TokenCarrier.extract("Bearer " + JWT, null))).doesNotContain("eyJ");
    }

    @Test
    void redactionMasksTheAccessTokenAndKeepsTheRest() {
        assertThat(Redaction.uri("/v1/live?topic=a&access_token=" + JWT + "&after="))
                .isEqualTo("/v1/live?topic=a&access_token=REDACTED&after=");
        assertThat(Redaction.uri("/v1/live?access_token=" + JWT)).isEqualTo("/v1/live?access_token=REDACTED");
        assertThat(Redaction.uri("/v1/live?access%5Ftoken=" + JWT)).isEqualTo("/v1/live?access%5Ftoken=REDACTED");
        assertThat(Redaction.uri("/v1/live?ACCESS_TOKEN=secret")).isEqualTo("/v1/live?ACCESS_TOKEN=REDACTED");
        assertThat(Redaction.uri("/v1/live?topic=a;access_token=x&access_token=y"))
                .isEqualTo("/v1/live?topic=a;access_token=REDACTED&access_token=REDACTED");
        assertThat(Redaction.uri("/v1/live?access_token")).isEqualTo("/v1/live?access_token=REDACTED");
        assertThat(Redaction.uri("/v1/live?topic=a#access_token=x")).as("fragment dropped").isEqualTo("/v1/live?topic=a");
        assertThat(Redaction.uri("/v1/live?token=" + JWT)).as("a JWT under another name").isEqualTo("/v1/live?token=REDACTED");
        assertThat(Redaction.uri("/v1/live?t=" + JWT.replace(".", "%2e"))).isEqualTo("/v1/live?t=REDACTED");
        assertThat(Redaction.uri("/v1/live?topic=orders.european&after=e1-5")).isEqualTo("/v1/live?topic=orders.european&after=e1-5");
        assertThat(Redaction.uri("/v1/topics/a/events")).isEqualTo("/v1/topics/a/events");
        assertThat(Redaction.uri(null)).isNull();
        assertThat(Redaction.query("topic=a&access_token=" + JWT)).isEqualTo("topic=a&access_token=REDACTED");
    }
}
