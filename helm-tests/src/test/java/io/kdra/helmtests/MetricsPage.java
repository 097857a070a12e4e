package io.kdra.helmtests;

import com.github.javaparser.ast.Node;
import com.github.javaparser.ast.expr.Expression;
import com.github.javaparser.ast.expr.MethodCallExpr;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * docs/reference/metrics.md: the meters the services register with Micrometer ({@code
 * Counter.builder("kdra.x")...register(registry)} and the like), found in their sources, under the
 * names Prometheus scrapes from /q/metrics.
 */
final class MetricsPage {

  /** Modules whose meters are listed, and which services run that module's code. */
  static final Map<String, String> MODULES =
      Map.of(
          "claim-controller", "claim-controller",
          "computeclass-bridge", "computeclass-bridge",
          "device-driver", "device-driver",
          "slice-publisher", "slice-publisher",
          "kube-support", "claim-controller, slice-publisher, computeclass-bridge");

  private static final Set<String> METERS =
      Set.of("Counter", "FunctionCounter", "Gauge", "Timer", "DistributionSummary");

  /** One meter: its Prometheus name, kind, label names, services and description. */
  record Metric(
      String name, String kind, Set<String> labels, String services, String description) {}

  private MetricsPage() {}

  static ReferencePage page() {
    StringBuilder body = new StringBuilder();
    body.append(
        """
        The services' own meters, as Prometheus reads them from each service's `/q/metrics` (the
        chart's PodMonitor scrapes them; [alerts](alerts.md) and the Grafana dashboard use them).
        Counters end in `_total`; a timer is `<name>_seconds_count`, `_sum` and `_max`. Quarkus
        adds its own JVM, HTTP and gRPC meters beside these.

        | metric | kind | labels | service | description |
        |---|---|---|---|---|
        """);
    for (Metric m : metrics().values()) {
      body.append("| ")
          .append(ReferencePage.code(m.name()))
          .append(" | ")
          .append(m.kind())
          .append(" | ")
          .append(m.labels().isEmpty() ? "" : String.join(", ", m.labels()))
          .append(" | ")
          .append(m.services())
          .append(" | ")
          .append(ReferencePage.cell(m.description()))
          .append(" |\n");
    }
    return new ReferencePage(
        "metrics.md", "Metrics", "the Micrometer meters in the services' sources", body.toString());
  }

  /** Every meter of the listed modules by Prometheus name. */
  static Map<String, Metric> metrics() {
    Map<String, Metric> out = new TreeMap<>();
    for (Map.Entry<String, String> module : MODULES.entrySet()) {
      for (Path file : sources(module.getKey())) {
        for (MethodCallExpr call : JavaSources.parse(file).findAll(MethodCallExpr.class)) {
          meter(call, module.getValue()).ifPresent(m -> out.merge(m.name(), m, MetricsPage::union));
        }
      }
    }
    return out;
  }

  /** The meter a {@code X.builder("name")} call starts, with its chain's tags and description. */
  private static java.util.Optional<Metric> meter(MethodCallExpr call, String services) {
    if (!call.getNameAsString().equals("builder")
        || call.getScope().isEmpty()
        || !call.getScope().get().isNameExpr()
        || !METERS.contains(call.getScope().get().asNameExpr().getNameAsString())
        || call.getArguments().isEmpty()) {
      return java.util.Optional.empty();
    }
    String kind = call.getScope().get().asNameExpr().getNameAsString();
    String name =
        JavaSources.constant(call.getArgument(0)).orElseThrow(() -> new AssertionError(call));
    Set<String> labels = new TreeSet<>();
    String description = "";
    Expression link = call;
    for (Node parent = call.getParentNode().orElse(null);
        parent instanceof MethodCallExpr next && next.getScope().orElse(null) == link;
        parent = next.getParentNode().orElse(null)) {
      switch (next.getNameAsString()) {
        case "tag" -> JavaSources.constant(next.getArgument(0)).ifPresent(labels::add);
        case "tags" -> {
          for (int i = 0; i + 1 < next.getArguments().size(); i += 2) {
            JavaSources.constant(next.getArgument(i)).ifPresent(labels::add);
          }
        }
        case "description" ->
            description = JavaSources.constant(next.getArgument(0)).orElse(description);
        default -> {}
      }
      link = next;
    }
    return java.util.Optional.of(
        new Metric(prometheusName(name, kind), kind(kind), labels, services, description));
  }

  /**
   * Micrometer's Prometheus naming: dots to underscores, counters {@code _total}, timers {@code
   * _seconds}.
   */
  static String prometheusName(String name, String kind) {
    String base = name.replace('.', '_');
    return switch (kind) {
      case "Counter", "FunctionCounter" -> base + "_total";
      case "Timer" -> base + "_seconds";
      default -> base;
    };
  }

  private static String kind(String meter) {
    return switch (meter) {
      case "Counter", "FunctionCounter" -> "counter";
      case "Gauge" -> "gauge";
      case "Timer" -> "timer";
      default -> "summary";
    };
  }

  private static Metric union(Metric a, Metric b) {
    Set<String> labels = new TreeSet<>(a.labels());
    labels.addAll(b.labels());
    return new Metric(
        a.name(),
        a.kind(),
        labels,
        a.services(),
        a.description().isEmpty() ? b.description() : a.description());
  }

  private static List<Path> sources(String module) {
    Path dir = ReferencePage.ROOT.resolve(module).resolve("src/main/java");
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
