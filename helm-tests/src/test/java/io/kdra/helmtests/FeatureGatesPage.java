package io.kdra.helmtests;

import com.github.javaparser.ast.CompilationUnit;
import com.github.javaparser.ast.body.EnumConstantDeclaration;
import com.github.javaparser.ast.body.EnumDeclaration;
import com.github.javaparser.ast.body.Parameter;
import com.github.javaparser.ast.body.RecordDeclaration;
import com.github.javaparser.ast.expr.Expression;
import com.github.javaparser.javadoc.JavadocBlockTag;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * docs/reference/feature-gates.md: the Kubernetes feature gates the allocator honours (dra-core's
 * {@code AllocatorFeatures}: one record component per gate, its Javadoc {@code @param} naming the
 * gate, {@code defaults()} its default), beside the chart's {@code featureGates} values, and the
 * chart's own switches that sit there too (with values.yaml's comments).
 */
final class FeatureGatesPage {

  static final String FEATURES = "dra-core/src/main/java/io/kdra/core/alloc/AllocatorFeatures.java";
  static final String VALUES = "helm/kdra/values.yaml";

  /** A gate: its upstream name, dra-core's default and what it changes. */
  record Gate(String name, boolean defaultValue, String description) {}

  private FeatureGatesPage() {}

  static ReferencePage page() {
    Map<String, String[]> chart = chartFeatureGates();
    StringBuilder body = new StringBuilder();
    body.append(
        """
        The allocator decides as Kubernetes does with these feature gates. `dra-alloc` and
        `kubectl dra` take them as `--feature-gates` (upstream's syntax); the claim-controller as
        `kdra.claim-controller.allocator.feature-gates`, which the chart sets from
        `featureGates.<gate>`. Set one as the cluster's kube-scheduler has it, so that both decide
        alike.

        | gate | default | chart value | what it changes |
        |---|---|---|---|
        """);
    List<Gate> gates = gates();
    for (Gate g : gates) {
      String[] value = chart.get(g.name());
      body.append("| `")
          .append(g.name())
          .append("` | ")
          .append(g.defaultValue())
          .append(" | ")
          .append(
              value == null ? "not settable" : "`featureGates." + g.name() + ": " + value[0] + "`")
          .append(" | ")
          .append(ReferencePage.cell(g.description()))
          .append(" |\n");
    }
    body.append(
        """

        ## The claim-controller's scheduler gates

        kube-scheduler's gates that change where the claim-controller places pods, beyond the
        allocator's (the claim-controller's `SchedulerFeatures`). It takes them as
        `kdra.claim-controller.feature-gates`, with the chart `claimController.config.feature-gates`.
        Set one as the cluster's kube-scheduler has it.

        | gate | default | what it changes |
        |---|---|---|
        | `TopologyAwareWorkloadScheduling` | false | alpha in 1.37: a PodGroup's topology constraint (`spec.schedulingConstraints`) places its pods in one domain; off, the constraint is ignored, as kube-scheduler ignores it with the gate off (see [gang scheduling](../user/gang-scheduling.md#turn-it-on)) |
        """);
    body.append(
        """

        ## The chart's own switches under `featureGates`

        Not Kubernetes gates: kdra's own, set in the chart's `featureGates`.

        | value | default | what it does |
        |---|---|---|
        """);
    for (Map.Entry<String, String[]> e : chart.entrySet()) {
      if (gates.stream().noneMatch(g -> g.name().equals(e.getKey()))) {
        body.append("| `featureGates.")
            .append(e.getKey())
            .append("` | ")
            .append(e.getValue()[0])
            .append(" | ")
            .append(ReferencePage.cell(e.getValue()[1]))
            .append(" |\n");
      }
    }
    return new ReferencePage(
        "feature-gates.md",
        "Feature gates",
        "dra-core's AllocatorFeatures and the chart's values.yaml",
        body.toString());
  }

  /**
   * The gates in AllocatorFeatures' order (its record components), each with its default: on when
   * its row in the {@code Gate} table has the stage {@code GA_OR_BETA}, which is what {@code
   * defaults()} turns on.
   */
  static List<Gate> gates() {
    CompilationUnit unit = JavaSources.parse(FEATURES);
    RecordDeclaration record = unit.findFirst(RecordDeclaration.class).orElseThrow();
    Map<String, String> params = new LinkedHashMap<>();
    for (JavadocBlockTag tag : record.getJavadoc().orElseThrow().getBlockTags()) {
      if (tag.getType() == JavadocBlockTag.Type.PARAM) {
        params.put(tag.getName().orElseThrow(), JavaSources.markdown(tag.getContent().toText()));
      }
    }
    // component name -> whether defaults() turns it on, from the rows (name, stage, accessor)
    Map<String, Boolean> onByDefault = new LinkedHashMap<>();
    Map<String, String> upstreamName = new LinkedHashMap<>();
    EnumDeclaration table =
        record
            .findFirst(EnumDeclaration.class, e -> e.getNameAsString().equals("Gate"))
            .orElseThrow();
    for (EnumConstantDeclaration row : table.getEntries()) {
      List<Expression> args = row.getArguments();
      String stage = args.get(1).asFieldAccessExpr().getNameAsString();
      String component = args.get(2).asMethodReferenceExpr().getIdentifier();
      onByDefault.put(component, stage.equals("GA_OR_BETA"));
      upstreamName.put(component, args.get(0).asStringLiteralExpr().getValue());
    }
    List<Gate> out = new ArrayList<>();
    Pattern gate = Pattern.compile("^`(DRA\\w+)`\\s*(.*)$");
    for (Parameter p : record.getParameters()) {
      String name = p.getNameAsString();
      Matcher m = gate.matcher(params.get(name));
      if (!m.matches()) {
        throw new AssertionError("@param " + name + " names no DRA gate first");
      }
      Boolean on = onByDefault.get(name);
      if (on == null) {
        throw new AssertionError("component " + name + " has no row in the Gate table");
      }
      if (!m.group(1).equals(upstreamName.get(name))) {
        throw new AssertionError(
            "@param " + name + " names " + m.group(1) + ", its row " + upstreamName.get(name));
      }
      // "(KEP 5018): requests ..." reads "KEP 5018: requests ..." in a table cell
      String description = m.group(2).replaceFirst("^\\((.*?)\\):", "$1:");
      out.add(new Gate(m.group(1), on, description));
    }
    return out;
  }

  /**
   * The chart's {@code featureGates} entries in values.yaml's order: the value, and the comment
   * lines right above the key.
   */
  static Map<String, String[]> chartFeatureGates() {
    List<String> lines;
    try {
      lines = Files.readAllLines(ReferencePage.ROOT.resolve(VALUES));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<String, String[]> out = new LinkedHashMap<>();
    int start = lines.indexOf("featureGates:");
    StringBuilder comment = new StringBuilder();
    Pattern entry = Pattern.compile("^  ([A-Za-z0-9]+): (\\S+)$");
    for (String line : lines.subList(start + 1, lines.size())) {
      if (!line.startsWith("  ")) {
        break;
      }
      Matcher m = entry.matcher(line);
      if (line.strip().startsWith("#")) {
        comment.append(line.strip().substring(1).strip()).append(' ');
      } else if (m.matches()) {
        out.put(m.group(1), new String[] {m.group(2), comment.toString().strip()});
        comment.setLength(0);
      }
    }
    return out;
  }
}
