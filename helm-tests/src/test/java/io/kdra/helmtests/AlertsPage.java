package io.kdra.helmtests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.Yaml;

/**
 * docs/reference/alerts.md: the alerts of the chart's PrometheusRule ({@code
 * files/prometheus-rules.yaml}), each with its severity, how long it must hold, its summary and
 * description, and its expression.
 */
final class AlertsPage {

  static final String SOURCE = "helm/kdra/files/prometheus-rules.yaml";

  private AlertsPage() {}

  @SuppressWarnings("unchecked")
  static ReferencePage page() {
    Map<String, Object> rules;
    try {
      rules = new Yaml().load(Files.readString(ReferencePage.ROOT.resolve(SOURCE)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    StringBuilder body = new StringBuilder();
    body.append(
        """
        The alerts the chart installs with `monitoring.prometheusRule.enabled` (a PrometheusRule of
        the Prometheus Operator). What to do about each: "Alerts and dashboard" in
        [observability](../user/observability.md); the meters they read: [metrics](metrics.md).

        | alert | severity | for | summary |
        |---|---|---|---|
        """);
    List<Map<String, Object>> all =
        ((List<Map<String, Object>>) rules.get("groups"))
            .stream()
                .flatMap(g -> ((List<Map<String, Object>>) g.get("rules")).stream())
                .filter(r -> r.containsKey("alert"))
                .toList();
    for (Map<String, Object> r : all) {
      body.append("| [")
          .append(r.get("alert"))
          .append("](#")
          .append(r.get("alert").toString().toLowerCase(java.util.Locale.ROOT))
          .append(") | ")
          .append(labels(r).getOrDefault("severity", ""))
          .append(" | ")
          .append(r.getOrDefault("for", "at once"))
          .append(" | ")
          .append(ReferencePage.cell(annotations(r).getOrDefault("summary", "")))
          .append(" |\n");
    }
    for (Map<String, Object> r : all) {
      body.append("\n## ")
          .append(r.get("alert"))
          .append("\n\n")
          .append(annotations(r).getOrDefault("description", "").strip().replaceAll("\\s+", " "))
          .append("\n\n```promql\n")
          .append(r.get("expr").toString().strip())
          .append("\n```\n");
    }
    return new ReferencePage("alerts.md", "Alerts", SOURCE, body.toString());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> labels(Map<String, Object> rule) {
    return (Map<String, String>) rule.getOrDefault("labels", Map.of());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> annotations(Map<String, Object> rule) {
    return (Map<String, String>) rule.getOrDefault("annotations", Map.of());
  }
}
