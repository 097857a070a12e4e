package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import java.util.List;
import java.util.Map;

/**
 * Matches nodes against a core/v1 {@code NodeSelector} with upstream's semantics: terms are ORed,
 * requirements within a term ANDed, an empty term matches nothing, {@code matchFields} supports
 * {@code metadata.name} only, and {@code Gt}/{@code Lt} compare integers (a non-integer label does
 * not match). Pure.
 */
public final class NodeSelectorMatcher {

  private NodeSelectorMatcher() {}

  /** Whether {@code node} matches; a null selector matches every node. */
  public static boolean matches(NodeSelector selector, Node node) {
    if (selector == null) {
      return true;
    }
    List<NodeSelectorTerm> terms = selector.getNodeSelectorTerms();
    return terms != null && terms.stream().anyMatch(t -> termMatches(t, node));
  }

  /** Whether every {@code key: value} of a pod's {@code spec.nodeSelector} is a node label. */
  public static boolean labelsMatch(Map<String, String> nodeSelector, Node node) {
    if (nodeSelector == null || nodeSelector.isEmpty()) {
      return true;
    }
    Map<String, String> labels = labels(node);
    return nodeSelector.entrySet().stream()
        .allMatch(e -> e.getValue().equals(labels.get(e.getKey())));
  }

  private static boolean termMatches(NodeSelectorTerm term, Node node) {
    List<NodeSelectorRequirement> exprs = term.getMatchExpressions() == null ? List.of()
        : term.getMatchExpressions();
    List<NodeSelectorRequirement> fields = term.getMatchFields() == null ? List.of()
        : term.getMatchFields();
    if (exprs.isEmpty() && fields.isEmpty()) {
      return false;
    }
    Map<String, String> labels = labels(node);
    for (NodeSelectorRequirement r : exprs) {
      if (!requirementMatches(r, labels.get(r.getKey()), labels.containsKey(r.getKey()))) {
        return false;
      }
    }
    for (NodeSelectorRequirement r : fields) {
      if (!"metadata.name".equals(r.getKey())) {
        return false;
      }
      String name = node.getMetadata().getName();
      if (!requirementMatches(r, name, true)) {
        return false;
      }
    }
    return true;
  }

  private static boolean requirementMatches(NodeSelectorRequirement r, String value,
      boolean present) {
    List<String> values = r.getValues() == null ? List.of() : r.getValues();
    switch (r.getOperator()) {
      case "In":
        return present && values.contains(value);
      case "NotIn":
        return !present || !values.contains(value);
      case "Exists":
        return present;
      case "DoesNotExist":
        return !present;
      case "Gt":
      case "Lt":
        if (!present || values.size() != 1) {
          return false;
        }
        try {
          long have = Long.parseLong(value);
          long want = Long.parseLong(values.get(0));
          return "Gt".equals(r.getOperator()) ? have > want : have < want;
        } catch (NumberFormatException e) {
          return false;
        }
      default:
        // An operator newer than this controller: never match rather than guess.
        return false;
    }
  }

  private static Map<String, String> labels(Node node) {
    Map<String, String> l = node.getMetadata().getLabels();
    return l == null ? Map.of() : l;
  }
}
