package io.pushd.loadtest.report;

import java.util.List;

/** A small table of results, e.g. one row per restart. Cells are rendered with {@code toString()}. */
public record Table(String title, List<String> headers, List<List<Object>> rows) {

    public Table {
        headers = List.copyOf(headers);
        rows = rows.stream().map(r -> (List<Object>) new java.util.ArrayList<>(r)).toList();
    }
}
