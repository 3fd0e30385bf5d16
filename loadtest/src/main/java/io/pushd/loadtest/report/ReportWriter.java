package io.pushd.loadtest.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Writes a {@link Report} as {@code report.json} (for machines and CI) and a self-contained
 * {@code report.html} (inline CSS and SVG, no scripts, no external assets: it opens from a CI
 * artifact or a mail attachment as it is), and prints the short summary.
 */
public final class ReportWriter {

    public static final String JSON_FILE = "report.json";
    public static final String HTML_FILE = "report.html";

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ReportWriter() {
    }

    /** Writes both files into {@code dir} (created if needed). */
    public static void write(Report report, Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(JSON_FILE), JSON.writeValueAsString(toJson(report)) + "\n",
                StandardCharsets.UTF_8);
        Files.writeString(dir.resolve(HTML_FILE), Html.render(report), StandardCharsets.UTF_8);
    }

    /** The checks, one line each, and the verdict. */
    public static void printSummary(Report report, PrintStream out) {
        out.printf(Locale.ROOT, "%s: %s in %.1f s%n", report.title(), report.passed() ? "PASSED" : "FAILED",
                report.durationMillis() / 1000.0);
        for (Check c : report.checks()) {
            out.printf(Locale.ROOT, "  [%s] %s: %s%n", c.passed() ? "pass" : "FAIL", c.name(), c.detail());
        }
        for (LatencySummary l : report.latencies()) {
            out.printf(Locale.ROOT, "  %s: n=%d p50=%.1f ms p99=%.1f ms max=%.1f ms%n", l.name(), l.count(), l.p50Ms(),
                    l.p99Ms(), l.maxMs());
        }
        for (String n : report.notes()) {
            out.println("  note: " + n);
        }
    }

    static ObjectNode toJson(Report r) {
        ObjectNode root = JSON.createObjectNode();
        root.put("scenario", r.scenario());
        root.put("title", r.title());
        root.put("passed", r.passed());
        root.put("commandLine", r.commandLine());
        root.put("started", r.started().toString());
        root.put("durationMs", r.durationMillis());
        ObjectNode settings = root.putObject("settings");
        r.settings().forEach((k, v) -> settings.set(k, JSON.valueToTree(v)));
        ArrayNode checks = root.putArray("checks");
        for (Check c : r.checks()) {
            checks.addObject().put("name", c.name()).put("passed", c.passed()).put("detail", c.detail());
        }
        ArrayNode lat = root.putArray("latencies");
        for (LatencySummary l : r.latencies()) {
            lat.add(JSON.valueToTree(l));
        }
        root.setAll(r.data());
        ArrayNode charts = root.putArray("charts");
        for (BarChart c : r.charts()) {
            charts.add(JSON.valueToTree(c));
        }
        ArrayNode notes = root.putArray("notes");
        r.notes().forEach(notes::add);
        return root;
    }

    /** The HTML page; every style and chart inline. */
    static final class Html {

        private static final String CSS = """
                body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1100px}
                h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
                .verdict{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:600}
                .pass{background:#2e7d32} .fail{background:#c62828}
                table{border-collapse:collapse;margin:6px 0} td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
                th{background:#f3f3f3} td.num{text-align:right;font-variant-numeric:tabular-nums}
                code{background:#f5f5f5;padding:1px 4px;border-radius:3px;word-break:break-all}
                .ok{color:#2e7d32;font-weight:600} .bad{color:#c62828;font-weight:600}
                svg{background:#fff;border:1px solid #ddd;margin:4px 0}
                """;

        static String render(Report r) {
            StringBuilder h = new StringBuilder(16_384);
            header(h, r);
            checks(h, r);
            for (FigureTable t : r.tables()) {
                if (!t.rows().isEmpty()) {
                    table(h, t.title(), t.headers(), t.rows());
                }
            }
            if (!r.charts().isEmpty()) {
                h.append("<h2>Charts</h2>\n");
                for (BarChart c : r.charts()) {
                    h.append(Svg.barChart(c)).append('\n');
                }
            }
            if (!r.latencies().isEmpty()) {
                table(h, "Latency", List.of("What", "n", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms"),
                        r.latencies().stream().map(l -> List.<Object>of(l.name(), l.count(), l.p50Ms(), l.p90Ms(),
                                l.p99Ms(), l.p999Ms(), l.maxMs())).toList());
            }
            h.append("<h2>Settings</h2>\n<table>\n");
            r.settings().forEach((k, v) -> h.append("<tr><th>").append(esc(k)).append("</th><td>")
                    .append(esc(format(v))).append("</td></tr>\n"));
            h.append("</table>\n");
            if (!r.notes().isEmpty()) {
                h.append("<h2>Notes</h2>\n<ul>\n");
                r.notes().forEach(n -> h.append("<li>").append(esc(n)).append("</li>\n"));
                h.append("</ul>\n");
            }
            h.append("<p style=\"color:#888\">Raw numbers: report.json next to this file.</p>\n</body></html>\n");
            return h.toString();
        }

        private static void header(StringBuilder h, Report r) {
            h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>")
                    .append(esc(r.title())).append("</title><style>").append(CSS).append("</style></head><body>\n");
            h.append("<h1>").append(esc(r.title())).append("</h1>\n<p><span class=\"verdict ")
                    .append(r.passed() ? "pass\">PASSED" : "fail\">FAILED").append("</span> ")
                    .append(esc(r.started().toString())).append(", ")
                    .append(String.format(Locale.ROOT, "%.1f s", r.durationMillis() / 1000.0)).append("</p>\n");
            h.append("<p><code>").append(esc(r.commandLine())).append("</code></p>\n");
        }

        private static void checks(StringBuilder h, Report r) {
            h.append("<h2>Checks</h2>\n<table><tr><th>Check</th><th>Result</th><th>Detail</th></tr>\n");
            for (Check c : r.checks()) {
                h.append("<tr><td>").append(esc(c.name())).append("</td><td class=\"")
                        .append(c.passed() ? "ok\">pass" : "bad\">FAIL").append("</td><td>")
                        .append(esc(c.detail())).append("</td></tr>\n");
            }
            h.append("</table>\n");
        }

        /** A titled table; numbers right-aligned. */
        private static void table(StringBuilder h, String title, List<String> headers, List<List<Object>> rows) {
            h.append("<h2>").append(esc(title)).append("</h2>\n<table><tr>");
            headers.forEach(x -> h.append("<th>").append(esc(x)).append("</th>"));
            h.append("</tr>\n");
            for (List<Object> row : rows) {
                h.append("<tr>");
                for (Object cell : row) {
                    boolean num = cell instanceof Number;
                    h.append(num ? "<td class=\"num\">" : "<td>").append(esc(format(cell))).append("</td>");
                }
                h.append("</tr>\n");
            }
            h.append("</table>\n");
        }

        static String format(Object v) {
            if (v instanceof Double || v instanceof Float) {
                return String.format(Locale.ROOT, "%.1f", ((Number) v).doubleValue());
            }
            return String.valueOf(v);
        }

        static String esc(String s) {
            if (s == null) {
                return "";
            }
            StringBuilder b = new StringBuilder(s.length());
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '<' -> b.append("&lt;");
                    case '>' -> b.append("&gt;");
                    case '&' -> b.append("&amp;");
                    case '"' -> b.append("&quot;");
                    default -> b.append(c);
                }
            }
            return b.toString();
        }
    }
}
