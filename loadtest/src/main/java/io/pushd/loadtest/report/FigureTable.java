package io.pushd.loadtest.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * A table of {@link Figure}s. Each {@link #row} puts its keyed figures into a report.json object,
 * adds the shown ones as a table row for report.html and prints them as one stdout line; the shown
 * values beyond the last header go into the last cell, joined with " / " (e.g. "p50 / p99").
 * Filled by the scenario thread.
 */
public final class FigureTable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String title;
    private final List<String> headers;
    private final PrintStream out;
    private final List<List<Object>> rows = new ArrayList<>();

    FigureTable(String title, List<String> headers, PrintStream out) {
        this.title = title;
        this.headers = List.copyOf(headers);
        this.out = out;
    }

    /** Adds one row; {@code json} receives every figure that has a key. */
    public FigureTable row(ObjectNode json, Figure... figures) {
        List<Object> cells = new ArrayList<>();
        for (Figure f : figures) {
            if (f.key() != null) {
                json.set(f.key(), JSON.valueToTree(f.value()));
            }
            if (f.shown() != null) {
                cells.add(f.shown());
            }
        }
        if (cells.size() > headers.size()) {
            List<Object> last = cells.subList(headers.size() - 1, cells.size());
            String joined = String.join(" / ", last.stream().map(FigureTable::text).toList());
            last.clear();
            cells.add(joined);
        }
        rows.add(List.copyOf(cells));
        print(cells);
        return this;
    }

    /** "  first: header value, header value" (what/value tables: "  what: value"). */
    private void print(List<Object> cells) {
        StringBuilder line = new StringBuilder("  ").append(text(cells.get(0))).append(':');
        for (int i = 1; i < cells.size(); i++) {
            line.append(i == 1 ? " " : ", ");
            if (headers.size() > 2) {
                line.append(headers.get(i)).append(' ');
            }
            line.append(text(cells.get(i)));
        }
        out.println(line);
    }

    private static String text(Object v) {
        return v instanceof Double d ? String.format(Locale.ROOT, "%,.1f", d) : String.valueOf(v);
    }

    public String title() {
        return title;
    }

    public List<String> headers() {
        return headers;
    }

    public List<List<Object>> rows() {
        return Collections.unmodifiableList(rows);
    }
}
