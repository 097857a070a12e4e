package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import io.kdra.claimcontroller.domain.PodTopologySpread.Constraint;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * kube-scheduler's PodTopologySpread score ({@code podtopologyspread/scoring.go}) for {@code
 * whenUnsatisfiable: ScheduleAnyway} constraints: a node scores, per constraint, the pods matching
 * the selector in its domain times {@code ln(domains + 2)}, plus {@code maxSkew - 1}; the totals
 * are inverted and normalised so the node whose domains hold the fewest matching pods scores 100.
 * Domains and weights come from the feasible nodes; pods are counted on every node that the
 * constraint's node inclusion policies admit. With own constraints, feasible nodes without every
 * topology key score 0. A pod without constraints gets the cluster defaults ({@code
 * kubernetes.io/hostname} maxSkew 3, {@code topology.kubernetes.io/zone} maxSkew 5, nodes without
 * the key still scored by the others) over upstream's {@code DefaultSelector}, here the pods of the
 * same ReplicaSet, StatefulSet or ReplicationController (its controller owner reference; the
 * Services that select the pod are not known here). Pure.
 */
final class PodTopologySpreadScore {

  static final String HOSTNAME = "kubernetes.io/hostname";
  static final String ZONE = "topology.kubernetes.io/zone";

  /** Upstream's {@code systemDefaultConstraints}. */
  static final List<TopologySpreadConstraint> DEFAULT_CONSTRAINTS =
      List.of(
          new TopologySpreadConstraintBuilder()
              .withTopologyKey(HOSTNAME)
              .withWhenUnsatisfiable("ScheduleAnyway")
              .withMaxSkew(3)
              .build(),
          new TopologySpreadConstraintBuilder()
              .withTopologyKey(ZONE)
              .withWhenUnsatisfiable("ScheduleAnyway")
              .withMaxSkew(5)
              .build());

  private static final Set<String> DEFAULT_SELECTOR_KINDS =
      Set.of("ReplicaSet", "StatefulSet", "ReplicationController");

  private PodTopologySpreadScore() {}

  /** One soft constraint: upstream's {@code topologySpreadConstraint}, its selector as a test. */
  private record Soft(Constraint constraint, Predicate<Pod> selects) {}

  /** Scores in {@code in.feasible()}'s order, or null when the pod has no soft constraint. */
  static long[] score(NodeScoring.Input in) {
    Pod pod = in.pod();
    List<TopologySpreadConstraint> declared = pod.getSpec().getTopologySpreadConstraints();
    boolean own = declared != null && !declared.isEmpty();
    List<Soft> cs = own ? declared(pod, declared) : defaults(pod);
    if (cs.isEmpty()) {
      return null;
    }
    List<Node> nodes = in.feasible();
    boolean requireAll = own;
    Set<String> ignored = new HashSet<>();
    List<Map<String, Long>> counts = new ArrayList<>();
    cs.forEach(c -> counts.add(new HashMap<>()));
    for (Node n : nodes) {
      Map<String, String> labels = NodeScoring.labels(n);
      if (requireAll && !hasAllKeys(labels, cs)) {
        ignored.add(n.getMetadata().getName());
        continue;
      }
      for (int i = 0; i < cs.size(); i++) {
        String key = cs.get(i).constraint().topologyKey();
        if (!HOSTNAME.equals(key)) {
          counts.get(i).putIfAbsent(labels.getOrDefault(key, ""), 0L);
        }
      }
    }
    double[] weight = new double[cs.size()];
    for (int i = 0; i < cs.size(); i++) {
      int size =
          HOSTNAME.equals(cs.get(i).constraint().topologyKey())
              ? nodes.size() - ignored.size()
              : counts.get(i).size();
      weight[i] = Math.log(size + 2);
    }
    Map<String, List<Pod>> byNode = byNode(pod, in.placed().get());
    for (Node n : in.allNodes()) {
      Map<String, String> labels = NodeScoring.labels(n);
      if (requireAll && !hasAllKeys(labels, cs)) {
        continue;
      }
      for (int i = 0; i < cs.size(); i++) {
        Soft c = cs.get(i);
        if (!c.constraint().includes(pod, n)) {
          continue;
        }
        String value = labels.getOrDefault(c.constraint().topologyKey(), "");
        if (HOSTNAME.equals(c.constraint().topologyKey()) || !counts.get(i).containsKey(value)) {
          continue;
        }
        counts.get(i).merge(value, count(byNode, n, c), Long::sum);
      }
    }
    long[] raw = new long[nodes.size()];
    for (int j = 0; j < raw.length; j++) {
      Node n = nodes.get(j);
      if (ignored.contains(n.getMetadata().getName())) {
        continue;
      }
      Map<String, String> labels = NodeScoring.labels(n);
      double score = 0;
      for (int i = 0; i < cs.size(); i++) {
        Constraint c = cs.get(i).constraint();
        String value = labels.get(c.topologyKey());
        if (value == null) {
          continue;
        }
        long cnt =
            HOSTNAME.equals(c.topologyKey())
                ? count(byNode, n, cs.get(i))
                : counts.get(i).getOrDefault(value, 0L);
        score += cnt * weight[i] + (c.maxSkew() - 1);
      }
      raw[j] = Math.round(score);
    }
    return normalize(raw, nodes, ignored);
  }

  /** Upstream's NormalizeScore: ignored nodes 0, else {@code 100 * (max + min - s) / max}. */
  private static long[] normalize(long[] raw, List<Node> nodes, Set<String> ignored) {
    long min = Long.MAX_VALUE;
    long max = 0;
    for (int j = 0; j < raw.length; j++) {
      if (!ignored.contains(nodes.get(j).getMetadata().getName())) {
        min = Math.min(min, raw[j]);
        max = Math.max(max, raw[j]);
      }
    }
    long[] out = new long[raw.length];
    for (int j = 0; j < raw.length; j++) {
      if (ignored.contains(nodes.get(j).getMetadata().getName())) {
        out[j] = 0;
      } else if (max == 0) {
        out[j] = NodeScoring.MAX_NODE_SCORE;
      } else {
        out[j] = NodeScoring.MAX_NODE_SCORE * (max + min - raw[j]) / max;
      }
    }
    return out;
  }

  private static List<Soft> declared(Pod pod, List<TopologySpreadConstraint> declared) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    List<Soft> out = new ArrayList<>();
    for (TopologySpreadConstraint c : declared) {
      if ("ScheduleAnyway".equals(c.getWhenUnsatisfiable())) {
        Constraint k = Constraint.of(c, labels);
        // upstream's countPodsMatchSelector: an empty selector counts no pod
        out.add(
            new Soft(
                k,
                p -> !k.selector().isEmpty() && k.selector().matches(p.getMetadata().getLabels())));
      }
    }
    return out;
  }

  /** The cluster defaults over the pods of the pod's controller, when it has one of those kinds. */
  private static List<Soft> defaults(Pod pod) {
    OwnerReference owner = controller(pod);
    if (owner == null || !DEFAULT_SELECTOR_KINDS.contains(owner.getKind())) {
      return List.of();
    }
    String uid = owner.getUid();
    Predicate<Pod> sameOwner =
        p -> {
          OwnerReference o = controller(p);
          return o != null && uid.equals(o.getUid());
        };
    return DEFAULT_CONSTRAINTS.stream()
        .map(c -> new Soft(Constraint.of(c, pod.getMetadata().getLabels()), sameOwner))
        .toList();
  }

  private static OwnerReference controller(Pod p) {
    List<OwnerReference> refs = p.getMetadata().getOwnerReferences();
    if (refs == null) {
      return null;
    }
    return refs.stream()
        .filter(r -> Boolean.TRUE.equals(r.getController()))
        .findFirst()
        .orElse(null);
  }

  private static boolean hasAllKeys(Map<String, String> labels, List<Soft> cs) {
    return cs.stream().allMatch(c -> labels.containsKey(c.constraint().topologyKey()));
  }

  /** The placed pods of the pod's namespace, not being deleted, by node name. */
  private static Map<String, List<Pod>> byNode(Pod pod, Collection<Pod> placed) {
    String ns = pod.getMetadata().getNamespace();
    Map<String, List<Pod>> byNode = new HashMap<>();
    for (Pod p : placed) {
      if (ns.equals(p.getMetadata().getNamespace())
          && p.getMetadata().getDeletionTimestamp() == null) {
        byNode.computeIfAbsent(p.getSpec().getNodeName(), n -> new ArrayList<>()).add(p);
      }
    }
    return byNode;
  }

  private static long count(Map<String, List<Pod>> byNode, Node n, Soft c) {
    long count = 0;
    for (Pod p : byNode.getOrDefault(n.getMetadata().getName(), List.of())) {
      if (c.selects().test(p)) {
        count++;
      }
    }
    return count;
  }
}
