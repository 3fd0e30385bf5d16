package io.pushd.loadtest.report;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The outcome of one run, independent of the scenario: its settings, the checks (the run passes
 * only when every check passes), latency percentiles, tables of {@link Figure}s, charts and
 * scenario-specific raw data for {@code report.json}. Written by {@link ReportWriter}. Not thread-safe: filled by the
 * scenario thread.
 */
public final class Report {

    private final String scenario;
    private final String title;
    private final String commandLine;
    private final Instant started = Instant.now();
    private final long startNanos = System.nanoTime();
    private long durationMillis = -1;
    private final Map<String, Object> settings = new LinkedHashMap<>();
    private final List<Check> checks = new ArrayList<>();
    private final List<LatencySummary> latencies = new ArrayList<>();
    private final List<FigureTable> tables = new ArrayList<>();
    private final List<BarChart> charts = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final ObjectNode data = JsonNodeFactory.instance.objectNode();

    public Report(String scenario, String title, String commandLine) {
        this.scenario = scenario;
        this.title = title;
        this.commandLine = commandLine;
    }

    public Report setting(String name, Object value) {
        settings.put(name, value);
        return this;
    }

    public Report check(String name, boolean passed, String detail) {
        checks.add(new Check(name, passed, detail));
        return this;
    }

    public Report latency(LatencySummary summary) {
        latencies.add(summary);
        return this;
    }

    /**
     * A new table of figures, shown in report.html (once it has a row) in the order the tables were
     * made; each row is also printed to {@code out} as it is added.
     */
    public FigureTable figures(String title, List<String> headers, PrintStream out) {
        FigureTable t = new FigureTable(title, headers, out);
        tables.add(t);
        return t;
    }

    public Report chart(BarChart chart) {
        charts.add(chart);
        return this;
    }

    public Report note(String note) {
        notes.add(note);
        return this;
    }

    /** Scenario-specific values for report.json (e.g. per-restart numbers under "restarts"). */
    public ObjectNode data() {
        return data;
    }

    /** Marks the end of the run. */
    public void finish() {
        durationMillis = (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** True only when there is at least one check and all of them passed. */
    public boolean passed() {
        return !checks.isEmpty() && checks.stream().allMatch(Check::passed);
    }

    public String scenario() {
        return scenario;
    }

    public String title() {
        return title;
    }

    public String commandLine() {
        return commandLine;
    }

    public Instant started() {
        return started;
    }

    public long durationMillis() {
        return durationMillis >= 0 ? durationMillis : (System.nanoTime() - startNanos) / 1_000_000;
    }

    public Map<String, Object> settings() {
        return Collections.unmodifiableMap(settings);
    }

    public List<Check> checks() {
        return Collections.unmodifiableList(checks);
    }

    public List<LatencySummary> latencies() {
        return Collections.unmodifiableList(latencies);
    }

    public List<FigureTable> tables() {
        return Collections.unmodifiableList(tables);
    }

    public List<BarChart> charts() {
        return Collections.unmodifiableList(charts);
    }

    public List<String> notes() {
        return Collections.unmodifiableList(notes);
    }
}
