package io.pushd.loadtest.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * nginx's record of the subscriptions it carried ({@link NginxFront#CONNECTION_LOG}), one line per
 * connection when it ended: {@code client|upstream(s)|status|end|duration|uri}. Each client has its
 * own loopback source address, so the address names the client, and the last upstream address
 * names the node that served it. That is the ground truth of "which node did a client leave and
 * where did it land", independent of the client library and of the servers' own accounting.
 */
public final class ConnectionLog {

    /**
     * One upgraded subscription (status 101 or an SSE 200).
     *
     * @param client      the client's index
     * @param nodePort    the port of the node that served it
     * @param startMillis epoch milliseconds nginx accepted the request
     * @param endMillis   epoch milliseconds it ended
     */
    public record Hop(int client, int nodePort, long startMillis, long endMillis) {
    }

    private final Map<Integer, List<Hop>> byClient;
    private final int lines;
    private final int skipped;

    private ConnectionLog(Map<Integer, List<Hop>> byClient, int lines, int skipped) {
        this.byClient = byClient;
        this.lines = lines;
        this.skipped = skipped;
    }

    /**
     * @param clientOf the client index of a remote address, or -1 for an address that is no client
     */
    public static ConnectionLog read(Path file, ToIntFunction<String> clientOf) throws IOException {
        Map<Integer, List<Hop>> byClient = new HashMap<>();
        int lines = 0;
        int skipped = 0;
        if (!Files.exists(file)) {
            return new ConnectionLog(byClient, 0, 0);
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            lines++;
            Hop h = parse(line, clientOf);
            if (h == null) {
                skipped++;
            } else {
                byClient.computeIfAbsent(h.client(), k -> new ArrayList<>()).add(h);
            }
        }
        byClient.values().forEach(l -> l.sort(Comparator.comparingLong(Hop::startMillis)));
        return new ConnectionLog(byClient, lines, skipped);
    }

    /** A subscription that was admitted (101, or 200 for SSE), else null (refused, not a client, malformed). */
    static Hop parse(String line, ToIntFunction<String> clientOf) {
        String[] f = line.split("\\|", -1);
        if (f.length < 6) {
            return null;
        }
        int client = clientOf.applyAsInt(f[0]);
        if (client < 0 || !("101".equals(f[2]) || "200".equals(f[2]))) {
            return null;
        }
        // "a:1, b:2" when nginx tried several nodes: the last one answered.
        String[] tried = f[1].split(",");
        String last = tried[tried.length - 1].trim();
        int colon = last.lastIndexOf(':');
        try {
            int port = Integer.parseInt(last.substring(colon + 1));
            long end = Math.round(Double.parseDouble(f[3]) * 1000);
            long duration = Math.round(Double.parseDouble(f[4]) * 1000);
            return new Hop(client, port, end - duration, end);
        } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
            return null;
        }
    }

    /** Lines read, and of those the ones that were no admitted subscription of a client. */
    public int lines() {
        return lines;
    }

    public int skipped() {
        return skipped;
    }

    /** The node port client {@code client} was connected to at {@code atMillis}, or -1. */
    public int nodeAt(int client, long atMillis) {
        for (Hop h : byClient.getOrDefault(client, List.of())) {
            if (h.startMillis() <= atMillis && h.endMillis() >= atMillis) {
                return h.nodePort();
            }
        }
        return -1;
    }

    /** The first connection of {@code client} that started in {@code [fromMillis, toMillis)}, or null. */
    public Hop firstFrom(int client, long fromMillis, long toMillis) {
        for (Hop h : byClient.getOrDefault(client, List.of())) {
            if (h.startMillis() >= fromMillis && h.startMillis() < toMillis) {
                return h;
            }
        }
        return null;
    }
}
