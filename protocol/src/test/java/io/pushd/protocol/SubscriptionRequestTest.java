package io.pushd.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SubscriptionRequestTest {

    private static final int MAX = 10;

    private static Map<String, List<String>> query(String... keyValues) {
        Map<String, List<String>> q = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            q.computeIfAbsent(keyValues[i], k -> new ArrayList<>()).add(keyValues[i + 1]);
        }
        return q;
    }

    private static ProtocolException failure(Map<String, List<String>> query, int max) {
        return catchThrowableOfType(ProtocolException.class, () -> SubscriptionRequest.parse(query, max));
    }

    @Test
    void topicParameterIsRepeatableAndKeepsItsOrder() {
        List<ClientMessage.Subscribe> subs = SubscriptionRequest.parse(query("topic", "b", "topic", "a"), MAX);

        assertThat(subs).containsExactly(new ClientMessage.Subscribe("b", null),
                new ClientMessage.Subscribe("a", null));
    }

    @Test
    void nameAtIdResumesThatTopicAfterTheId() {
        List<ClientMessage.Subscribe> subs =
                SubscriptionRequest.parse(query("topic", "a@ep1-7", "topic", "b"), MAX);

        assertThat(subs).containsExactly(new ClientMessage.Subscribe("a", new EventId("ep1", 7)),
                new ClientMessage.Subscribe("b", null));
    }

    @Test
    void nameAtWithNothingAfterItMeansLiveOnly() {
        assertThat(SubscriptionRequest.parse(query("topic", "a@"), MAX))
                .containsExactly(new ClientMessage.Subscribe("a", null));
    }

    @Test
    void afterParameterAppliesToTheSingleTopic() {
        assertThat(SubscriptionRequest.parse(query("topic", "a", "after", "ep1-3"), MAX))
                .containsExactly(new ClientMessage.Subscribe("a", new EventId("ep1", 3)));
    }

    @Test
    void emptyAfterParameterMeansLiveOnly() {
        assertThat(SubscriptionRequest.parse(query("topic", "a", "after", ""), MAX))
                .containsExactly(new ClientMessage.Subscribe("a", null));
    }

    @Test
    void afterWithTwoTopicsIsAnInvalidQuery() {
        ProtocolException e = failure(query("topic", "a", "topic", "b", "after", "ep1-3"), MAX);

        assertThat(e.code()).isEqualTo(ErrorCodes.INVALID_QUERY);
        assertThat(e).hasMessageContaining("after");
    }

    @Test
    void afterGivenTwiceIsAnInvalidQuery() {
        assertThat(failure(query("topic", "a", "after", "ep1-3", "after", "ep1-4"), MAX).code())
                .isEqualTo(ErrorCodes.INVALID_QUERY);
    }

    @Test
    void afterTogetherWithNameAtIdIsAnInvalidQuery() {
        assertThat(failure(query("topic", "a@ep1-1", "after", "ep1-3"), MAX).code())
                .isEqualTo(ErrorCodes.INVALID_QUERY);
    }

    @Test
    void unknownParameterIsAnInvalidQueryNamingIt() {
        ProtocolException e = failure(query("topic", "a", "since", "ep1-3"), MAX);

        assertThat(e.code()).isEqualTo(ErrorCodes.INVALID_QUERY);
        assertThat(e).hasMessageContaining("'since'");
    }

    @Test
    void missingTopicIsAnInvalidQuery() {
        assertThat(failure(query(), MAX).code()).isEqualTo(ErrorCodes.INVALID_QUERY);
        assertThat(failure(query("after", "ep1-3"), MAX)).hasMessageContaining("topic");
    }

    @Test
    void sameTopicTwiceIsAnInvalidQuery() {
        ProtocolException e = failure(query("topic", "a", "topic", "a@ep1-2"), MAX);

        assertThat(e.code()).isEqualTo(ErrorCodes.INVALID_QUERY);
        assertThat(e).hasMessageContaining("'a'");
    }

    @Test
    void moreTopicsThanTheLimitIsTooManyTopics() {
        assertThat(SubscriptionRequest.parse(query("topic", "a", "topic", "b"), 2)).hasSize(2);

        ProtocolException e = failure(query("topic", "a", "topic", "b", "topic", "c"), 2);

        assertThat(e.code()).isEqualTo(ErrorCodes.TOO_MANY_TOPICS);
        assertThat(e).hasMessageContaining("3").hasMessageContaining("at most 2");
    }

    @Test
    void malformedIdInTopicOrAfterIsInvalidId() {
        assertThat(failure(query("topic", "a@nodash"), MAX).code()).isEqualTo(ErrorCodes.INVALID_ID);
        assertThat(failure(query("topic", "a@EP-1"), MAX).code()).isEqualTo(ErrorCodes.INVALID_ID);
        assertThat(failure(query("topic", "a", "after", "ep1-x"), MAX).code()).isEqualTo(ErrorCodes.INVALID_ID);
        assertThat(failure(query("topic", "a", "after", "ep1--1"), MAX).code()).isEqualTo(ErrorCodes.INVALID_ID);
    }

    @Test
    void invalidTopicNameIsInvalidTopic() {
        assertThat(failure(query("topic", "a b"), MAX).code()).isEqualTo(ErrorCodes.INVALID_TOPIC);
        assertThat(failure(query("topic", "@ep1-1"), MAX).code()).isEqualTo(ErrorCodes.INVALID_TOPIC);
        assertThat(failure(query("topic", "x".repeat(201)), MAX).code()).isEqualTo(ErrorCodes.INVALID_TOPIC);
    }

    @Test
    void aQueryWithoutTopicFollowsTheDefaultTopicWithItsAfter() {
        assertThat(SubscriptionRequest.parse(query("after", "ep1-7"), MAX, "feed"))
                .containsExactly(new ClientMessage.Subscribe("feed", new EventId("ep1", 7)));
        assertThat(SubscriptionRequest.parse(query("after", ""), MAX, "feed"))
                .containsExactly(new ClientMessage.Subscribe("feed", null));
        assertThat(SubscriptionRequest.parse(query(), MAX, "feed"))
                .containsExactly(new ClientMessage.Subscribe("feed", null));
    }

    @Test
    void aNamedTopicWinsOverTheDefaultTopic() {
        assertThat(SubscriptionRequest.parse(query("topic", "a", "after", "ep1-2"), MAX, "feed"))
                .containsExactly(new ClientMessage.Subscribe("a", new EventId("ep1", 2)));
    }

    @Test
    void withoutADefaultTopicAMissingTopicIsStillRefused() {
        ProtocolException e = catchThrowableOfType(ProtocolException.class,
                () -> SubscriptionRequest.parse(query("after", "ep1-7"), MAX, null));

        assertThat(e.code()).isEqualTo(ErrorCodes.INVALID_QUERY);
    }
}
