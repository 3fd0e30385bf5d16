package io.pushd.loadtest.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.pushd.loadtest.report.Check;
import io.pushd.loadtest.report.Report;
import io.pushd.protocol.EventId;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Recorder;
import org.junit.jupiter.api.Test;

class FleetAuditTest {

    private static EventId id(long seq) {
        return new EventId("ep", seq);
    }

    /** A client that subscribed at head {@code ep-<from>} and then received {@code seqs}. */
    private static ClientRecord client(Long from, long... seqs) {
        ClientRecord c = new ClientRecord(0, "t", new Recorder(3), new Recorder(3));
        c.onConnected(System.nanoTime());
        c.onSubscribed("t", from == null ? null : id(from), null);
        for (long s : seqs) {
            c.onEvent("t", id(s), 0, JsonNodeFactory.instance.objectNode());
        }
        return c;
    }

    @Test
    void aClientHoldingExactlyTheRunAfterItsSubscribedHeadIsRight() {
        assertThat(FleetAudit.problem(client(5L, 6, 7, 8), id(8))).isNull();
        assertThat(FleetAudit.problem(client(null, 1, 2), id(2))).isNull();
    }

    @Test
    void aMissingLastEventIsFound() {
        assertThat(FleetAudit.problem(client(5L, 6, 7), id(8))).isEqualTo("last event seq 7, head 8");
    }

    @Test
    void aMissingFirstEventIsFound() {
        assertThat(FleetAudit.problem(client(5L, 7, 8), id(8))).isEqualTo("first event seq 7, expected 6");
    }

    @Test
    void aGapADuplicateOrAStepBackIsOutOfOrder() {
        assertThat(FleetAudit.problem(client(5L, 6, 8), id(8))).startsWith("1 out-of-order events; first: after ep-6 came ep-8");
        assertThat(FleetAudit.problem(client(5L, 6, 6, 7), id(7))).startsWith("1 out-of-order events");
        assertThat(FleetAudit.problem(client(5L, 6, 7, 6), id(7))).startsWith("1 out-of-order events");
    }

    @Test
    void eventsOfAnotherEpochAreFound() {
        assertThat(FleetAudit.problem(client(5L, 6), new EventId("new", 6))).isEqualTo("epoch ep, server new");
    }

    @Test
    void nothingNewMeansNoEventsExpected() {
        assertThat(FleetAudit.problem(client(5L), id(5))).isNull();
        assertThat(FleetAudit.problem(client(5L, 6), id(5))).isEqualTo("received 1 events, expected none");
        assertThat(FleetAudit.problem(client(null), null)).isNull();
    }

    @Test
    void aClientThatNeverSubscribedIsWrong() {
        ClientRecord c = new ClientRecord(0, "t", new Recorder(3), new Recorder(3));

        assertThat(FleetAudit.problem(c, id(3))).isEqualTo("never subscribed");
    }

    @Test
    void caughtUpMeansHoldingTheHeadOrNothingNew() {
        assertThat(FleetAudit.caughtUp(client(5L, 6, 7), id(7))).isTrue();
        assertThat(FleetAudit.caughtUp(client(5L, 6), id(7))).isFalse();
        assertThat(FleetAudit.caughtUp(client(5L), id(5))).isTrue();
        assertThat(FleetAudit.caughtUp(client(5L), null)).isTrue();
    }

    @Test
    void verifyCountsTheWrongClientsAndTheDeliveries() {
        Report report = new Report("test", "test", "test");
        List<ClientRecord> clients = List.of(client(5L, 6, 7), client(5L, 6));

        FleetAudit.Result r = FleetAudit.verify(clients, Map.of("t", id(7)), report);

        assertThat(r.clientsWrong()).isEqualTo(1);
        assertThat(r.deliveries()).isEqualTo(3);
        assertThat(r.exact()).isFalse();
        assertThat(report.checks()).extracting(Check::passed).containsExactly(false, true);
        assertThat(report.checks().get(0).detail()).startsWith("1/2 clients differ");
        assertThat(report.data().get("deliveries").get("total").asLong()).isEqualTo(3);
    }

    @Test
    void verifyPassesWhenEveryClientIsRight() {
        Report report = new Report("test", "test", "test");

        FleetAudit.Result r = FleetAudit.verify(List.of(client(5L, 6, 7), client(6L, 7)), Map.of("t", id(7)), report);

        assertThat(r.exact()).isTrue();
        assertThat(report.passed()).isTrue();
    }
}
