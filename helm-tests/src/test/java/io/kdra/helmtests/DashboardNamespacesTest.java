package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The Grafana dashboard filters each panel by a namespace variable, and the variable of a panel
 * must list the namespaces where that panel's pods run: the device-driver may run in a namespace of
 * its own ({@code deviceDriver.namespace}), where no publisher metric is, so the driver's panels
 * take their namespaces from the driver's metrics and every other panel from the release's.
 */
class DashboardNamespacesTest {

  private static final Pattern NAMESPACE_FILTER = Pattern.compile("namespace=~\"\\$(\\w+)\"");
  private static final String DRIVER_METRICS = "kdra_driver_";

  @Test
  void eachPanelsNamespaceVariableListsTheNamespacesOfItsOwnMetrics() {
    Map<String, String> variables = namespaceVariables();
    Set<String> used = new TreeSet<>();
    for (String expr : expressions()) {
      Matcher m = NAMESPACE_FILTER.matcher(expr);
      assertThat(m.find()).as("%s filters by a namespace variable", expr).isTrue();
      String variable = m.group(1);
      assertThat(variables).as("variables of the dashboard").containsKey(variable);
      boolean drivers = expr.contains(DRIVER_METRICS);
      assertThat(variables.get(variable).contains(DRIVER_METRICS))
          .as(
              "%s: $%s (%s) lists the namespaces of %s metrics",
              expr, variable, variables.get(variable), drivers ? "the driver's" : "the release's")
          .isEqualTo(drivers);
      used.add(variable);
    }
    assertThat(used).as("variables the panels use").hasSizeGreaterThan(1);
    assertThat(variables).containsOnlyKeys(used);
  }

  /** The dashboard's query variables that list label values of {@code namespace}: name, query. */
  @SuppressWarnings("unchecked")
  private static Map<String, String> namespaceVariables() {
    Map<String, String> out = new TreeMap<>();
    List<Map<String, Object>> list =
        (List<Map<String, Object>>)
            ((Map<String, Object>) dashboard().get("templating")).get("list");
    for (Map<String, Object> v : list) {
      if ("query".equals(v.get("type"))) {
        String query = (String) ((Map<String, Object>) v.get("query")).get("query");
        assertThat(v.get("definition"))
            .as("%s: definition and query", v.get("name"))
            .isEqualTo(query);
        if (query.endsWith(", namespace)")) {
          out.put((String) v.get("name"), query);
        }
      }
    }
    return out;
  }

  private static List<String> expressions() {
    return AlertRulesTest.dashboardExpressions();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> dashboard() {
    Map<String, String> data =
        (Map<String, String>)
            AlertRulesTest.dashboardConfigMap(
                    AlertRulesTest.documents(
                        DriverNamespaceRenderTest.inDriverNamespace(
                            "monitoring.grafanaDashboard.enabled", true)))
                .get("data");
    return new Yaml().load(data.get("kdra.json"));
  }
}
