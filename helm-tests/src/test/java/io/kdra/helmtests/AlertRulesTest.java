package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The monitoring objects: the PrometheusRule's rules as the chart renders them, checked and
 * unit-tested by Prometheus's own promtool (src/test/resources/alert-rules-test.yaml), the
 * dashboard's queries parsed by it too, and every metric they name one that the services register.
 */
class AlertRulesTest {

  static final Map<String, Object> ON =
      Chart.values(
          "monitoring.prometheusRule.enabled",
          true,
          "monitoring.podMonitor.enabled",
          true,
          "monitoring.grafanaDashboard.enabled",
          true,
          "monitoring.prometheusRule.labels",
          Map.of("release", "prometheus"));
  static final List<String> MODULES_WITH_METERS =
      List.of(
          "claim-controller",
          "slice-publisher",
          "device-driver",
          "computeclass-bridge",
          "kube-support");

  @Test
  void nothingMonitoringIsRenderedByDefault() {
    assertThat(documents(Map.of()))
        .extracting(d -> d.get("kind"))
        .doesNotContain("PrometheusRule", "PodMonitor")
        .isNotEmpty();
    assertThat(documents(Map.of())).noneMatch(d -> labels(d).containsKey("grafana_dashboard"));
  }

  @Test
  void theSwitchesRenderTheRuleThePodMonitorAndTheDashboard() {
    List<Map<String, Object>> docs = documents(ON);
    assertThat(labels(one(docs, "PrometheusRule"))).containsEntry("release", "prometheus");
    Map<String, Object> pm = one(docs, "PodMonitor");
    assertThat(pm.toString()).contains("port=http", "path=/q/metrics");
    Map<String, Object> dashboard = dashboardConfigMap(docs);
    @SuppressWarnings("unchecked")
    Map<String, String> data = (Map<String, String>) dashboard.get("data");
    assertThat(data.get("kdra.json"))
        .isEqualTo(read(Chart.DIR.resolve("files/grafana-dashboard.json")).strip());
  }

  @Test
  void promtoolChecksTheRenderedRules(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("kdra-rules.yaml"), new Yaml().dump(ruleSpec()));
    Promtool.Result r = Promtool.run(dir, "check", "rules", "--lint-fatal", "kdra-rules.yaml");
    assertThat(r.exitCode()).as(r.output()).isZero();
    assertThat(r.output()).contains("SUCCESS: " + alertNames().size() + " rules found");
  }

  @Test
  void everyAlertFiresWhenItsSeriesSaySoAndNotBefore(@TempDir Path dir) throws IOException {
    Files.writeString(
        dir.resolve("kdra-rules.yaml"), new Yaml().dump(withoutAnnotations(ruleSpec())));
    String unitTests = resource("/alert-rules-test.yaml");
    Files.writeString(dir.resolve("alert-rules-test.yaml"), unitTests);
    Promtool.Result r = Promtool.run(dir, "test", "rules", "alert-rules-test.yaml");
    assertThat(r.exitCode()).as(r.output()).isZero();
    for (String alert : alertNames()) {
      assertThat(unitTests)
          .as("a unit test fires " + alert)
          .contains("alertname: " + alert + "\n        exp_alerts:\n          - exp_labels");
    }
  }

  @Test
  void everyDashboardQueryParses(@TempDir Path dir) {
    for (String expr : dashboardExpressions()) {
      // Grafana's variables, as Grafana fills them in
      String query =
          expr.replace("$__rate_interval", "5m")
              .replace("$namespace", ".*")
              .replace("$driver_namespace", ".*");
      Promtool.Result r = Promtool.run(dir, "promql", "format", "--experimental", query);
      assertThat(r.exitCode()).as("%s: %s", query, r.output()).isZero();
    }
  }

  @Test
  void rulesAndDashboardNameOnlyMetricsTheServicesRegister() {
    Set<String> exported = exportedMetrics();
    assertThat(exported)
        .contains(
            "kdra_claim_controller_pending_pods",
            "kdra_driver_claim_operation_errors_total",
            "kdra_publisher_inventories_total");
    List<String> exprs = new ArrayList<>(dashboardExpressions());
    exprs.addAll(ruleExpressions());
    Set<String> named = new TreeSet<>();
    Pattern metric = Pattern.compile("\\bkdra_[a-z_]+");
    for (String e : exprs) {
      Matcher m = metric.matcher(e);
      while (m.find()) {
        named.add(m.group());
      }
    }
    assertThat(named).isNotEmpty();
    assertThat(exported).as("metrics the services register").containsAll(named);
  }

  /**
   * The Prometheus names of the services' Micrometer meters, as Micrometer's Prometheus registry
   * writes them: dots to underscores, counters with {@code _total}, timers in seconds with their
   * count, sum, max, buckets and quantiles. Read from the sources (builder and registry calls).
   */
  static Set<String> exportedMetrics() {
    Pattern meter =
        Pattern.compile(
            "(Counter|Timer|Gauge)\\.builder\\(\\s*\"([^\"]+)\"|registry\\.(counter|timer|gauge)\\(\\s*\"([^\"]+)\"");
    Set<String> names = new TreeSet<>();
    for (String service : MODULES_WITH_METERS) {
      try (Stream<Path> files =
          Files.walk(Chart.DIR.resolve("../../" + service + "/src/main/java"))) {
        for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
          Matcher m = meter.matcher(read(f));
          while (m.find()) {
            String type = (m.group(1) != null ? m.group(1) : m.group(3)).toLowerCase();
            String base = (m.group(2) != null ? m.group(2) : m.group(4)).replace('.', '_');
            switch (type) {
              case "counter" -> names.add(base + "_total");
              case "timer" ->
                  Stream.of("", "_count", "_sum", "_max", "_bucket")
                      .forEach(s -> names.add(base + "_seconds" + s));
              default -> names.add(base);
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return names;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> ruleSpec() {
    return (Map<String, Object>) one(documents(ON), "PrometheusRule").get("spec");
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> rules(Map<String, Object> spec) {
    return ((List<Map<String, Object>>) spec.get("groups"))
        .stream().flatMap(g -> ((List<Map<String, Object>>) g.get("rules")).stream()).toList();
  }

  static List<String> alertNames() {
    return rules(ruleSpec()).stream().map(r -> (String) r.get("alert")).toList();
  }

  static List<String> ruleExpressions() {
    return rules(ruleSpec()).stream().map(r -> (String) r.get("expr")).toList();
  }

  static Map<String, Object> withoutAnnotations(Map<String, Object> spec) {
    rules(spec).forEach(r -> r.remove("annotations"));
    return spec;
  }

  @SuppressWarnings("unchecked")
  static List<String> dashboardExpressions() {
    Map<String, String> data = (Map<String, String>) dashboardConfigMap(documents(ON)).get("data");
    Map<String, Object> dashboard = new Yaml().load(data.get("kdra.json"));
    return ((List<Map<String, Object>>) dashboard.get("panels"))
        .stream()
            .filter(p -> p.containsKey("targets"))
            .flatMap(p -> ((List<Map<String, Object>>) p.get("targets")).stream())
            .map(t -> (String) t.get("expr"))
            .toList();
  }

  static Map<String, Object> dashboardConfigMap(List<Map<String, Object>> docs) {
    return docs.stream()
        .filter(d -> "ConfigMap".equals(d.get("kind")))
        .filter(d -> "1".equals(labels(d).get("grafana_dashboard")))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no ConfigMap labelled grafana_dashboard: \"1\""));
  }

  static List<Map<String, Object>> documents(Map<String, Object> values) {
    List<Map<String, Object>> docs = new ArrayList<>();
    for (Object doc : new Yaml().loadAll(Chart.template(values))) {
      if (doc instanceof Map<?, ?> m) {
        @SuppressWarnings("unchecked")
        Map<String, Object> typed = (Map<String, Object>) m;
        docs.add(typed);
      }
    }
    return docs;
  }

  static Map<String, Object> one(List<Map<String, Object>> docs, String kind) {
    List<Map<String, Object>> found =
        docs.stream().filter(d -> kind.equals(d.get("kind"))).toList();
    assertThat(found).as(kind).hasSize(1);
    return found.get(0);
  }

  @SuppressWarnings("unchecked")
  static Map<String, String> labels(Map<String, Object> doc) {
    Map<String, Object> metadata = (Map<String, Object>) doc.get("metadata");
    Object labels = metadata.get("labels");
    return labels == null ? Map.of() : (Map<String, String>) labels;
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = AlertRulesTest.class.getResourceAsStream(name)) {
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
