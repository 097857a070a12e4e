package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Node selector matching as {@code k8s.io/component-helpers/scheduling/corev1/nodeaffinity} does
 * it: terms are ORed, the requirements of a term ANDed; a term without requirements matches
 * nothing; {@code matchFields} supports {@code metadata.name}. Requirements with an unknown
 * operator, or a non-integer value for {@code Gt}/{@code Lt}, do not match (upstream rejects such
 * selectors at validation time).
 */
public final class NodeSelectors {

  private NodeSelectors() {}

  /** Whether the node satisfies the selector; a null selector matches nothing. */
  public static boolean matches(NodeSelector selector, Node node) {
    if (selector == null || selector.getNodeSelectorTerms() == null || node == null) {
      return false;
    }
    for (NodeSelectorTerm term : selector.getNodeSelectorTerms()) {
      if (termMatches(term, node)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the node may use every one of these allocations: kube-scheduler's DynamicResources
   * filter for a pod's already-allocated claims ("resourceclaim not available on the node"). A null
   * entry is an allocation without a node selector, usable on every node.
   */
  public static boolean allowAll(Collection<NodeSelector> allocationSelectors, Node node) {
    for (NodeSelector s : allocationSelectors) {
      if (s != null && !matches(s, node)) {
        return false;
      }
    }
    return true;
  }

  /** The {@code status.allocation.nodeSelector}s of the allocated ones among these claims. */
  public static List<NodeSelector> ofAllocated(Collection<ResourceClaim> claims) {
    List<NodeSelector> out = new ArrayList<>();
    for (ResourceClaim c : claims) {
      if (c.getStatus() != null
          && c.getStatus().getAllocation() != null
          && c.getStatus().getAllocation().getNodeSelector() != null) {
        out.add(c.getStatus().getAllocation().getNodeSelector());
      }
    }
    return out;
  }

  /** Whether every label in {@code required} is present on the node with the same value. */
  public static boolean labelsMatch(Map<String, String> required, Node node) {
    if (required == null || required.isEmpty()) {
      return true;
    }
    Map<String, String> labels = labels(node);
    for (Map.Entry<String, String> e : required.entrySet()) {
      if (!e.getValue().equals(labels.get(e.getKey()))) {
        return false;
      }
    }
    return true;
  }

  static boolean termMatches(NodeSelectorTerm term, Node node) {
    List<NodeSelectorRequirement> exprs = term.getMatchExpressions();
    List<NodeSelectorRequirement> fields = term.getMatchFields();
    boolean hasExprs = exprs != null && !exprs.isEmpty();
    boolean hasFields = fields != null && !fields.isEmpty();
    if (!hasExprs && !hasFields) {
      return false;
    }
    Map<String, String> labels = labels(node);
    if (hasExprs) {
      for (NodeSelectorRequirement r : exprs) {
        if (!requirementMatches(r, labels.containsKey(r.getKey()), labels.get(r.getKey()))) {
          return false;
        }
      }
    }
    if (hasFields) {
      String name = node.getMetadata() == null ? null : node.getMetadata().getName();
      for (NodeSelectorRequirement r : fields) {
        if (!"metadata.name".equals(r.getKey())) {
          return false;
        }
        String op = r.getOperator();
        if (!"In".equals(op) && !"NotIn".equals(op)) {
          return false;
        }
        if (!requirementMatches(r, name != null, name)) {
          return false;
        }
      }
    }
    return true;
  }

  private static boolean requirementMatches(
      NodeSelectorRequirement r, boolean present, String value) {
    List<String> values = r.getValues() == null ? List.of() : r.getValues();
    String op = r.getOperator() == null ? "" : r.getOperator();
    switch (op) {
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
          return op.equals("Gt") ? have > want : have < want;
        } catch (NumberFormatException e) {
          return false;
        }
      default:
        return false;
    }
  }

  private static Map<String, String> labels(Node node) {
    if (node.getMetadata() == null || node.getMetadata().getLabels() == null) {
      return Map.of();
    }
    return node.getMetadata().getLabels();
  }
}
