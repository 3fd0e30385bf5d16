package io.pushd.loadtest.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class FigureTableTest {

    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final Report report = new Report("test", "Test", "push-loadtest test");
    private final ObjectNode json = JsonNodeFactory.instance.objectNode();

    private String printed() {
        return stdout.toString(StandardCharsets.UTF_8);
    }

    @Test
    void oneFigureGoesToTheJsonTheTableAndStdout() {
        FigureTable t = report.figures("Figures", List.of("what", "value"), new PrintStream(stdout, true));

        t.row(json, Figure.label("rate/s"), Figure.shown("perSecond", 1234.5678, Figure.round1(1234.5678)),
                Figure.json("window", 10));

        assertThat(json.get("perSecond").asDouble()).isEqualTo(1234.5678);
        assertThat(json.get("window").asInt()).isEqualTo(10);
        assertThat(t.rows()).containsExactly(List.of("rate/s", 1234.6));
        assertThat(printed()).isEqualTo("  rate/s: 1,234.6" + System.lineSeparator());
        assertThat(ReportWriter.Html.render(report)).contains("<h2>Figures</h2>", "<td>rate/s</td>",
                "<td class=\"num\">1234.6</td>");
    }

    @Test
    void shownValuesBeyondTheLastHeaderShareTheLastCell() {
        FigureTable t = report.figures("Figures", List.of("what", "value"), new PrintStream(stdout, true));

        t.row(json, Figure.label("p50 / p99 ms"), Figure.fmt("p50", 1.234, "%.2f"), Figure.fmt("p99", 9.5, "%.2f"));

        assertThat(t.rows()).containsExactly(List.of("p50 / p99 ms", "1.23 / 9.50"));
        assertThat(json.get("p50").asDouble()).isEqualTo(1.234);
        assertThat(printed()).startsWith("  p50 / p99 ms: 1.23 / 9.50");
    }

    @Test
    void aRowTableNamesEachColumnOnStdout() {
        FigureTable t = report.figures("Restarts", List.of("#", "mode", "first"), new PrintStream(stdout, true));

        t.row(json, Figure.label(1), Figure.of("mode", "crash"), Figure.seconds("firstMs", 1234.0));

        assertThat(t.rows()).containsExactly(List.of(1, "crash", 1.23));
        assertThat(json.get("firstMs").asDouble()).isEqualTo(1234.0);
        assertThat(printed()).startsWith("  1: mode crash, first 1.2");
    }

    @Test
    void anEmptyTableIsNotShown() {
        report.figures("Nothing here", List.of("what", "value"), new PrintStream(stdout, true));

        assertThat(ReportWriter.Html.render(report)).doesNotContain("Nothing here");
    }
}
