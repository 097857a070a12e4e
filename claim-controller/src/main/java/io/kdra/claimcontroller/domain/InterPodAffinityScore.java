package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinityTerm;
import io.fabric8.kubernetes.api.model.WeightedPodAffinityTerm;
import io.kdra.claimcontroller.domain.InterPodAffinity.Term;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's InterPodAffinity score ({@code interpodaffinity/scoring.go}): for every placed
 * pod, the weights of the pod's preferred affinity terms it matches are added to (anti-affinity:
 * taken from) its node's topology domain; so are the weights of the placed pod's own preferred
 * terms that match the pod, and 1 (the default {@code hardPodAffinityWeight}) for each of its
 * required affinity terms that match the pod. A node scores the sum over the domains it is in,
 * normalised from the lowest (0) to the highest (100). When the pod has no preferred term only the
 * placed pods with affinity terms are read; when nothing adds up the plugin does not score
 * (upstream's PreScore Skip). Namespaces as in {@link InterPodAffinity}. Pure.
 */
public final class InterPodAffinityScore {

  /** Upstream's default {@code hardPodAffinityWeight}. */
  static final int HARD_POD_AFFINITY_WEIGHT = 1;

  private InterPodAffinityScore() {}

  private record Weighted(Term term, int weight) {}

  /** Normalised scores in {@code in.feasible()}'s order, or null when nothing scores. */
  static long[] score(NodeScoring.Input in) {
    Pod pod = in.pod();
    List<Weighted> affinity = preferred(pod, false);
    List<Weighted> anti = preferred(pod, true);
    boolean own = !affinity.isEmpty() || !anti.isEmpty();
    Collection<Pod> existing = own ? in.placed().get() : in.placedWithAffinity();
    if (existing.isEmpty()) {
      return null;
    }
    Map<String, Map<String, String>> namespaceLabels = in.namespaceLabels().get();
    affinity = affinity.stream().map(w -> merged(w, namespaceLabels)).toList();
    anti = anti.stream().map(w -> merged(w, namespaceLabels)).toList();
    Map<String, String> nsLabels = namespaceLabels.get(pod.getMetadata().getNamespace());
    Map<String, Node> byName = new HashMap<>();
    in.allNodes().forEach(n -> byName.put(n.getMetadata().getName(), n));
    Map<String, Map<String, Long>> topology = new HashMap<>();
    for (Pod p : existing) {
      Node node = byName.get(p.getSpec().getNodeName());
      if (node == null || NodeScoring.labels(node).isEmpty()) {
        continue;
      }
      // the pod's terms have their namespace selector merged in: no labels passed, as upstream
      for (Weighted w : affinity) {
        add(topology, w.term(), w.weight(), p, null, node);
      }
      for (Weighted w : anti) {
        add(topology, w.term(), -w.weight(), p, null, node);
      }
      for (PodAffinityTerm t : required(p)) {
        add(topology, Term.of(p, t), HARD_POD_AFFINITY_WEIGHT, pod, nsLabels, node);
      }
      for (Weighted w : preferred(p, false)) {
        add(topology, w.term(), w.weight(), pod, nsLabels, node);
      }
      for (Weighted w : preferred(p, true)) {
        add(topology, w.term(), -w.weight(), pod, nsLabels, node);
      }
    }
    if (topology.isEmpty()) {
      return null;
    }
    List<Node> nodes = in.feasible();
    long[] raw = new long[nodes.size()];
    for (int i = 0; i < raw.length; i++) {
      Map<String, String> labels = NodeScoring.labels(nodes.get(i));
      for (Map.Entry<String, Map<String, Long>> e : topology.entrySet()) {
        String v = labels.get(e.getKey());
        if (v != null) {
          raw[i] += e.getValue().getOrDefault(v, 0L);
        }
      }
    }
    return normalize(raw);
  }

  /** Upstream's NormalizeScore: lowest to 0, highest to 100, all equal to 0. */
  static long[] normalize(long[] raw) {
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (long s : raw) {
      min = Math.min(min, s);
      max = Math.max(max, s);
    }
    long[] out = new long[raw.length];
    long diff = max - min;
    for (int i = 0; i < raw.length; i++) {
      out[i] =
          diff > 0 ? (long) (NodeScoring.MAX_NODE_SCORE * ((double) (raw[i] - min) / diff)) : 0;
    }
    return out;
  }

  /** Whether the pod has any pod affinity or anti-affinity term, required or preferred. */
  public static boolean hasPodAffinity(Pod pod) {
    Affinity a = pod.getSpec() == null ? null : pod.getSpec().getAffinity();
    return a != null && (a.getPodAffinity() != null || a.getPodAntiAffinity() != null);
  }

  private static void add(
      Map<String, Map<String, Long>> topology,
      Term term,
      int weight,
      Pod matched,
      Map<String, String> nsLabels,
      Node node) {
    if (!term.matches(matched, nsLabels)) {
      return;
    }
    String v = NodeScoring.labels(node).get(term.topologyKey());
    if (v != null) {
      topology
          .computeIfAbsent(term.topologyKey(), k -> new HashMap<>())
          .merge(v, (long) weight, Long::sum);
    }
  }

  private static Weighted merged(Weighted w, Map<String, Map<String, String>> namespaceLabels) {
    return new Weighted(w.term().merged(namespaceLabels), w.weight());
  }

  private static List<PodAffinityTerm> required(Pod p) {
    Affinity a = p.getSpec().getAffinity();
    if (a == null
        || a.getPodAffinity() == null
        || a.getPodAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() == null) {
      return List.of();
    }
    return a.getPodAffinity().getRequiredDuringSchedulingIgnoredDuringExecution();
  }

  private static List<Weighted> preferred(Pod p, boolean anti) {
    Affinity a = p.getSpec() == null ? null : p.getSpec().getAffinity();
    if (a == null) {
      return List.of();
    }
    List<WeightedPodAffinityTerm> terms =
        anti
            ? (a.getPodAntiAffinity() == null
                ? null
                : a.getPodAntiAffinity().getPreferredDuringSchedulingIgnoredDuringExecution())
            : (a.getPodAffinity() == null
                ? null
                : a.getPodAffinity().getPreferredDuringSchedulingIgnoredDuringExecution());
    if (terms == null || terms.isEmpty()) {
      return List.of();
    }
    return terms.stream()
        .filter(t -> t.getPodAffinityTerm() != null)
        .map(
            t ->
                new Weighted(
                    Term.of(p, t.getPodAffinityTerm()), t.getWeight() == null ? 0 : t.getWeight()))
        .toList();
  }
}
