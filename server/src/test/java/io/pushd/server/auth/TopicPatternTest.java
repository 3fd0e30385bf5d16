package io.pushd.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class TopicPatternTest {

    @Test
    void anExactNameMatchesOnlyItself() {
        TopicPattern p = TopicPattern.parse("orders");
        assertThat(p.matches("orders")).isTrue();
        assertThat(p.matches("orders.eu")).isFalse();
        assertThat(p.matches("order")).isFalse();
        assertThat(p.matches("ordersX")).isFalse();
        assertThat(p.matches("Orders")).as("case-sensitive like topic names").isFalse();
    }

    @Test
    void aPrefixPatternMatchesEveryDeeperTopicButNotThePrefixItself() {
        TopicPattern p = TopicPattern.parse("orders.*");
        assertThat(p.matches("orders.eu")).isTrue();
        assertThat(p.matches("orders.eu.1")).isTrue();
        assertThat(p.matches("orders.")).as("nothing after the dot").isFalse();
        assertThat(p.matches("orders")).isFalse();
        assertThat(p.matches("ordersX")).isFalse();
        assertThat(p.matches("ordersX.eu")).isFalse();
        assertThat(TopicPattern.parse("a.b.*").matches("a.b.c")).isTrue();
        assertThat(TopicPattern.parse("a.b.*").matches("a.bc")).isFalse();
    }

    @Test
    void aStarAloneMatchesEveryTopic() {
        TopicPattern p = TopicPattern.parse("*");
        for (String t : List.of("a", "orders", "orders.eu", "x:y-z_1")) {
            assertThat(p.matches(t)).isTrue();
        }
    }

    @Test
    void invalidPatternsAreRefusedWithTheTextQuoted() {
        for (String bad : List.of("", ".*", "ord*", "*.eu", "a.*.b", "a.**", "a b", "a/b", "ä", "a.*.*", "**", "orders*",
                "x".repeat(201), "x".repeat(201) + ".*")) {
            assertThatThrownBy(() -> TopicPattern.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("expected: a topic name, a prefix ending in .* or * alone");
        }
        assertThatThrownBy(() -> TopicPattern.parse("x".repeat(300))).hasMessageNotContaining("x".repeat(65));
    }

    @Test
    void theLongestValidNameAndPrefixAreAccepted() {
        assertThat(TopicPattern.parse("x".repeat(200)).matches("x".repeat(200))).isTrue();
        assertThat(TopicPattern.parse("x".repeat(200) + ".*").matches("x".repeat(200) + ".y")).isTrue();
        assertThat(TopicPattern.parse("A-Z_0.9:x").toString()).isEqualTo("A-Z_0.9:x");
    }

    @Test
    void aGrantAllowsWhatAnyOfItsPatternsAllows() {
        Grant g = new Grant("u", List.of(TopicPattern.parse("news"), TopicPattern.parse("orders.*")),
                List.of(TopicPattern.parse("chat.*")), null);
        assertThat(g.maySubscribe("news")).isTrue();
        assertThat(g.maySubscribe("orders.eu")).isTrue();
        assertThat(g.maySubscribe("chat.a")).isFalse();
        assertThat(g.mayPublish("chat.a")).isTrue();
        assertThat(g.mayPublish("news")).isFalse();
        assertThat(Grant.anonymous(false).maySubscribe("anything")).isTrue();
        assertThat(Grant.anonymous(false).mayPublish("anything")).isFalse();
        assertThat(Grant.anonymous(true).mayPublish("anything")).isTrue();
    }
}
