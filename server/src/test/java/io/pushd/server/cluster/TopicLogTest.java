package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.history.EventHistory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ring's reads name the epoch their caller labels the events with. */
class TopicLogTest {

    private static byte[] data(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aReadNamingTheEpochBeforeAResetGetsEpochChangedAndNoneOfTheNewHistorysEvents() {
        TopicLog log = new TopicLog("t", 16, "old", 0, 0);
        for (long s = 1; s <= 3; s++) {
            log.add(s, 0, data("old" + s));
        }
        String seen = log.epoch(); // a subscription looked at the epoch ...
        log.reset("new"); // ... the applier found Redis' history replaced ...
        for (long s = 1; s <= 5; s++) {
            log.add(s, 0, data("new" + s));
        }
        List<String> got = new ArrayList<>();
        int n = log.readCached(seen, 1, 10, (seq, ts, d) -> got.add(new String(d, StandardCharsets.UTF_8)));
        assertThat(n).isEqualTo(EventHistory.EPOCH_CHANGED);
        assertThat(got).isEmpty();

        assertThat(log.readCached("new", 1, 10, (seq, ts, d) -> got.add(new String(d, StandardCharsets.UTF_8))))
                .isEqualTo(4);
        assertThat(got).containsExactly("new2", "new3", "new4", "new5");
    }
}
