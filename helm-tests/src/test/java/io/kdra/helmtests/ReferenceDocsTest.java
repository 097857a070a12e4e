package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pages of docs/reference/ are what their generators make from the sources now: a change to
 * values.yaml, a service's configuration interface, a meter, an alert rule or a feature gate that
 * leaves its page behind fails here. Regenerate with {@value ReferencePage#REGENERATE}.
 */
class ReferenceDocsTest {

  static Stream<Arguments> pages() {
    return Stream.of(
        Arguments.of("helm-values.md", (Supplier<ReferencePage>) HelmValuesPage::page),
        Arguments.of(
            "service-properties.md", (Supplier<ReferencePage>) ServicePropertiesPage::page),
        Arguments.of("metrics.md", (Supplier<ReferencePage>) MetricsPage::page),
        Arguments.of("alerts.md", (Supplier<ReferencePage>) AlertsPage::page),
        Arguments.of("feature-gates.md", (Supplier<ReferencePage>) FeatureGatesPage::page));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pages")
  void pageIsCurrent(String file, Supplier<ReferencePage> generator) {
    generator.get().check();
  }

  @Test
  void aStalePageFailsWithTheCommandThatRegeneratesIt() {
    assumeFalse(Boolean.getBoolean("kdra.docs.write"), "would overwrite alerts.md");
    ReferencePage stale = new ReferencePage("alerts.md", "Alerts", AlertsPage.SOURCE, "stale");
    assertThatThrownBy(stale::check)
        .hasMessageContaining("docs/reference/alerts.md is stale")
        .hasMessageContaining(ReferencePage.REGENERATE);
  }

  /** An alert on a metric no service exports would never fire. */
  @Test
  void everyMetricTheAlertsReadIsOneTheServicesExport() throws IOException {
    String rules = Files.readString(ReferencePage.ROOT.resolve(AlertsPage.SOURCE));
    Set<String> exported = MetricsPage.metrics().keySet();
    List<String> unknown = new ArrayList<>();
    Matcher m = Pattern.compile("\\bkdra_[a-z_]+").matcher(rules);
    while (m.find()) {
      String name = m.group().replaceFirst("_(count|sum|max|bucket)$", "");
      if (!exported.contains(name)) {
        unknown.add(m.group());
      }
    }
    assertThat(unknown).as("metrics in %s", AlertsPage.SOURCE).isEmpty();
  }
}
