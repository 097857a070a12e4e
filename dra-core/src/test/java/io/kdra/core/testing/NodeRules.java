package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The node rules: node selectors, the node a selector names, a pod's own node constraints. */
final class NodeRules {

  private NodeRules() {}

  /** Null when the pod may run on the node (name, node selector, required affinity), else why. */
  static String podMisfit(Pod pod, Node node) {
    var spec = pod.getSpec();
    String name = node.getMetadata().getName();
    if (spec.getNodeName() != null
        && !spec.getNodeName().isEmpty()
        && !spec.getNodeName().equals(name)) {
      return "is not the pod's node name " + spec.getNodeName();
    }
    Map<String, String> labels =
        node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
    if (spec.getNodeSelector() != null) {
      for (var want : new TreeMap<>(spec.getNodeSelector()).entrySet()) {
        if (!want.getValue().equals(labels.get(want.getKey()))) {
          return "does not match the pod's node selector " + want.getKey() + "=" + want.getValue();
        }
      }
    }
    if (spec.getAffinity() != null
        && spec.getAffinity().getNodeAffinity() != null
        && spec.getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution()
            != null
        && !selects(
            spec.getAffinity()
                .getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution(),
            node)) {
      return "does not match the pod's required node affinity";
    }
    return null;
  }

  /** Whether the selector (of a slice, device, allocation or affinity) selects the node. */
  static boolean selects(NodeSelector selector, Node node) {
    for (NodeSelectorTerm t : selector.getNodeSelectorTerms()) {
      boolean ok = true;
      for (NodeSelectorRequirement r :
          t.getMatchExpressions() == null
              ? List.<NodeSelectorRequirement>of()
              : t.getMatchExpressions()) {
        String v =
            node.getMetadata().getLabels() == null
                ? null
                : node.getMetadata().getLabels().get(r.getKey());
        ok &=
            switch (r.getOperator()) {
              case "In" -> v != null && r.getValues().contains(v);
              case "NotIn" -> v == null || !r.getValues().contains(v);
              case "Exists" -> v != null;
              case "DoesNotExist" -> v == null;
              default -> false;
            };
      }
      for (NodeSelectorRequirement r :
          t.getMatchFields() == null ? List.<NodeSelectorRequirement>of() : t.getMatchFields()) {
        boolean in = r.getValues().contains(node.getMetadata().getName());
        ok &=
            "metadata.name".equals(r.getKey())
                && ("In".equals(r.getOperator()) ? in : "NotIn".equals(r.getOperator()) && !in);
      }
      if (ok) {
        return true;
      }
    }
    return false;
  }

  /** The node a result's selector names by {@code metadata.name}, or null. */
  static String nodeName(NodeSelector s) {
    if (s == null || s.getNodeSelectorTerms() == null) {
      return null;
    }
    for (NodeSelectorTerm t : s.getNodeSelectorTerms()) {
      if (t.getMatchFields() == null) {
        continue;
      }
      for (NodeSelectorRequirement r : t.getMatchFields()) {
        if ("metadata.name".equals(r.getKey())
            && r.getValues() != null
            && r.getValues().size() == 1) {
          return r.getValues().get(0);
        }
      }
    }
    return null;
  }
}
