package io.kdra.kubectl;

import java.util.ArrayList;
import java.util.List;

/**
 * Columns as {@code kubectl get} prints them: upper-case headers, left-aligned, three spaces apart,
 * the last column unpadded; an empty cell is {@code <none>}. Hand-written: the few lines kubectl's
 * printer needs do not warrant a library. Pure.
 */
final class Table {

  private final List<String> headers;
  private final List<List<String>> rows = new ArrayList<>();

  Table(String... headers) {
    this.headers = List.of(headers);
  }

  Table row(String... cells) {
    if (cells.length != headers.size()) {
      throw new IllegalArgumentException("expected " + headers.size() + " cells");
    }
    List<String> r = new ArrayList<>();
    for (String c : cells) {
      r.add(c == null || c.isEmpty() ? "<none>" : c);
    }
    rows.add(r);
    return this;
  }

  boolean isEmpty() {
    return rows.isEmpty();
  }

  /** The table's lines, header first. */
  List<String> lines() {
    int[] width = new int[headers.size()];
    for (int i = 0; i < width.length; i++) {
      width[i] = headers.get(i).length();
      for (List<String> r : rows) {
        width[i] = Math.max(width[i], r.get(i).length());
      }
    }
    List<String> out = new ArrayList<>();
    out.add(line(headers, width));
    rows.forEach(r -> out.add(line(r, width)));
    return out;
  }

  private static String line(List<String> cells, int[] width) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < cells.size(); i++) {
      String c = cells.get(i);
      b.append(c);
      if (i < cells.size() - 1) {
        b.append(" ".repeat(width[i] - c.length() + 3));
      }
    }
    return b.toString();
  }
}
