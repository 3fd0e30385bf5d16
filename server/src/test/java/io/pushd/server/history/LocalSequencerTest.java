package io.pushd.server.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LocalSequencerTest {

    @Test
    void continuesAfterTheRecoveredHead() {
        LocalSequencer s = new LocalSequencer(Map.of("a", 41L));

        assertThat(s.next("a")).isEqualTo(42);
        assertThat(s.next("a")).isEqualTo(43);
    }

    @Test
    void newTopicStartsAtOne() {
        LocalSequencer s = new LocalSequencer(Map.of("a", 41L));

        assertThat(s.next("fresh")).isEqualTo(1);
        assertThat(s.next("fresh")).isEqualTo(2);
    }

    @Test
    void aReleasedNumberIsHandedOutAgain() {
        LocalSequencer s = new LocalSequencer(Map.of("a", 41L));

        long refused = s.next("a");
        s.release("a", refused);
        assertThat(s.next("a")).isEqualTo(42);
        s.release("a", 7); // not the last number handed out: nothing changes
        assertThat(s.next("a")).isEqualTo(43);
    }

    @Test
    void aNewTopicWhoseFirstNumberIsReleasedGivesItsTopicSlotBack() {
        LocalSequencer s = new LocalSequencer(Map.of("a", 41L), 2);

        s.release("f1", s.next("f1")); // refused, say 507 storage_full: nothing was stored
        s.release("f2", s.next("f2"));
        assertThat(s.next("g1")).as("a slot is free again").isEqualTo(1);
        assertThatThrownBy(() -> s.next("g2")).isInstanceOf(TopicLimitException.class);
        s.release("a", s.next("a"));
        assertThat(s.next("a")).as("a kept topic keeps its slot and its head").isEqualTo(42);
    }

    @Test
    void topicsCountIndependently() {
        LocalSequencer s = new LocalSequencer(Map.of());

        assertThat(s.next("a")).isEqualTo(1);
        assertThat(s.next("b")).isEqualTo(1);
        assertThat(s.next("a")).isEqualTo(2);
        assertThat(s.next("b")).isEqualTo(2);
    }

    @Test
    void laterChangesToTheRecoveredMapDoNotAffectIt() {
        Map<String, Long> heads = new HashMap<>(Map.of("a", 5L));
        LocalSequencer s = new LocalSequencer(heads);

        heads.put("a", 100L);
        heads.put("b", 100L);

        assertThat(s.next("a")).isEqualTo(6);
        assertThat(s.next("b")).isEqualTo(1);
        assertThat(heads).containsEntry("a", 100L);
    }
}
