package io.kdra.helmtests;

import java.nio.file.Path;

/**
 * docs/reference/helm-values.md: helm-docs (github.com/norwoodj/helm-docs, built from its Go module
 * like promtool) renders the chart's values and their {@code # --} comments through
 * src/test/resources/reference/helm-values.gotmpl; {@code --dry-run} prints the page instead of
 * writing a README into the chart.
 */
final class HelmValuesPage {

  private static final GoTool HELM_DOCS = new GoTool("build-helm-docs.sh", "ReferenceDocsTest");
  private static final Path TEMPLATE =
      Path.of("src", "test", "resources", "reference", "helm-values.gotmpl").toAbsolutePath();

  private HelmValuesPage() {}

  static ReferencePage page() {
    String body =
        HELM_DOCS.stdout(
            Chart.DIR,
            "--chart-search-root",
            Chart.DIR.toString(),
            "--template-files",
            TEMPLATE.toString(),
            "--log-level",
            "warning",
            "--dry-run");
    return new ReferencePage(
        "helm-values.md", "Helm values", "helm/kdra/values.yaml (helm-docs)", body);
  }
}
