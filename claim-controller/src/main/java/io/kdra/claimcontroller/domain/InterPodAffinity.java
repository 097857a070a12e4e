package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinityTerm;
import io.kdra.claimcontroller.domain.LabelSelectors.Selector;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * kube-scheduler's InterPodAffinity filter (required terms only; preferred ones only score), as
 * upstream's {@code interpodaffinity/filtering.go} decides: the pod's required affinity must find a
 * matching pod in the node's topology domain of every term, its required anti-affinity none, and no
 * placed pod's required anti-affinity may match the pod in the node's domain. A pod whose affinity
 * terms match itself may go first when no placed pod matches them anywhere. Terms are read as
 * upstream's {@code AffinityTerm}: no namespaces and no namespace selector means the pod's own
 * namespace; the pod's own terms have the namespaces their selector picks merged in (then, as
 * upstream, they are matched against other pods without those pods' namespace labels); a placed
 * pod's anti-affinity is matched against the new pod's namespace labels. {@code matchLabelKeys} and
 * {@code mismatchLabelKeys} need nothing here: the API server merges them into {@code
 * labelSelector} when the pod is created. Pure.
 */
public final class InterPodAffinity {

  public static final String REASON_AFFINITY = "node(s) didn't match pod affinity rules";
  public static final String REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules";
  public static final String REASON_EXISTING_ANTI_AFFINITY =
      "node(s) didn't satisfy existing pods anti-affinity rules";

  /** No term anywhere concerns the pod: every node passes (upstream's PreFilter Skip). */
  public static final InterPodAffinity NONE =
      new InterPodAffinity(null, List.of(), List.of(), Map.of(), Map.of(), Map.of());

  /** Upstream's {@code framework.AffinityTerm}. */
  record Term(Set<String> namespaces, Selector selector, String topologyKey, Selector nsSelector) {

    static Term of(Pod owner, PodAffinityTerm t) {
      Set<String> ns = new HashSet<>();
      if ((t.getNamespaces() == null || t.getNamespaces().isEmpty())
          && t.getNamespaceSelector() == null) {
        ns.add(owner.getMetadata().getNamespace());
      } else if (t.getNamespaces() != null) {
        ns.addAll(t.getNamespaces());
      }
      return new Term(
          ns,
          LabelSelectors.of(t.getLabelSelector()),
          t.getTopologyKey(),
          LabelSelectors.of(t.getNamespaceSelector()));
    }

    /** Upstream's {@code AffinityTerm.Matches}. */
    boolean matches(Pod pod, Map<String, String> nsLabels) {
      if (namespaces.contains(pod.getMetadata().getNamespace()) || nsSelector.matches(nsLabels)) {
        return selector.matches(pod.getMetadata().getLabels());
      }
      return false;
    }

    /** With the names of the namespaces its selector picks (upstream's merge in PreFilter). */
    Term merged(Map<String, Map<String, String>> namespaceLabels) {
      if (nsSelector.isEmpty()) {
        return this;
      }
      Set<String> ns = new HashSet<>(namespaces);
      namespaceLabels.forEach(
          (name, labels) -> {
            if (nsSelector.matches(labels)) {
              ns.add(name);
            }
          });
      return new Term(ns, selector, topologyKey, nsSelector);
    }
  }

  private record TopologyPair(String key, String value) {}

  private final Pod pod;
  private final List<Term> affinity;
  private final List<Term> antiAffinity;
  private final Map<TopologyPair, Long> affinityCounts;
  private final Map<TopologyPair, Long> antiAffinityCounts;
  private final Map<TopologyPair, Long> existingAntiAffinityCounts;

  private InterPodAffinity(
      Pod pod,
      List<Term> affinity,
      List<Term> antiAffinity,
      Map<TopologyPair, Long> affinityCounts,
      Map<TopologyPair, Long> antiAffinityCounts,
      Map<TopologyPair, Long> existingAntiAffinityCounts) {
    this.pod = pod;
    this.affinity = affinity;
    this.antiAffinity = antiAffinity;
    this.affinityCounts = affinityCounts;
    this.antiAffinityCounts = antiAffinityCounts;
    this.existingAntiAffinityCounts = existingAntiAffinityCounts;
  }

  /**
   * The PreFilter: counts per topology pair, as upstream's.
   *
   * @param nodes node name to node: placed pods on other nodes are not counted, as upstream counts
   *     the pods of its snapshot's nodes
   * @param placed the pods bound (or being bound) to a node, not terminal, not the pod itself; read
   *     only when the pod has required terms
   * @param placedWithAntiAffinity those of {@code placed} with required anti-affinity terms
   * @param namespaceLabels namespace name to its labels, for namespace selectors
   */
  public static InterPodAffinity prefilter(
      Pod pod,
      Map<String, Node> nodes,
      Collection<Pod> placed,
      Collection<Pod> placedWithAntiAffinity,
      Map<String, Map<String, String>> namespaceLabels) {
    List<Term> affinity = required(pod, false);
    List<Term> anti = required(pod, true);
    if (affinity.isEmpty() && anti.isEmpty() && placedWithAntiAffinity.isEmpty()) {
      return NONE;
    }
    affinity = affinity.stream().map(t -> t.merged(namespaceLabels)).toList();
    anti = anti.stream().map(t -> t.merged(namespaceLabels)).toList();
    Map<String, String> nsLabels = namespaceLabels.get(pod.getMetadata().getNamespace());
    Map<TopologyPair, Long> existing = new HashMap<>();
    for (Pod p : placedWithAntiAffinity) {
      Node node = nodes.get(p.getSpec().getNodeName());
      if (node == null) {
        continue;
      }
      for (Term t : required(p, true)) {
        if (t.matches(pod, nsLabels)) {
          count(existing, node, t.topologyKey());
        }
      }
    }
    Map<TopologyPair, Long> affinityCounts = new HashMap<>();
    Map<TopologyPair, Long> antiCounts = new HashMap<>();
    if (!affinity.isEmpty() || !anti.isEmpty()) {
      for (Pod p : placed) {
        Node node = nodes.get(p.getSpec().getNodeName());
        if (node == null) {
          continue;
        }
        if (matchesAll(affinity, p)) {
          affinity.forEach(t -> count(affinityCounts, node, t.topologyKey()));
        }
        for (Term t : anti) {
          // the pod's terms have their namespace selector merged in: no labels passed, as upstream
          if (t.matches(p, null)) {
            count(antiCounts, node, t.topologyKey());
          }
        }
      }
    }
    if (existing.isEmpty() && affinity.isEmpty() && anti.isEmpty()) {
      return NONE;
    }
    return new InterPodAffinity(pod, affinity, anti, affinityCounts, antiCounts, existing);
  }

  /** The Filter: the reason the node is rejected, if it is. */
  public Optional<String> reject(Node node) {
    if (pod == null) {
      return Optional.empty();
    }
    Map<String, String> labels = node.getMetadata().getLabels();
    if (labels == null) {
      labels = Map.of();
    }
    if (!satisfiesAffinity(labels)) {
      return Optional.of(REASON_AFFINITY);
    }
    if (!antiAffinityCounts.isEmpty()) {
      for (Term t : antiAffinity) {
        String v = labels.get(t.topologyKey());
        if (v != null
            && antiAffinityCounts.getOrDefault(new TopologyPair(t.topologyKey(), v), 0L) > 0) {
          return Optional.of(REASON_ANTI_AFFINITY);
        }
      }
    }
    if (!existingAntiAffinityCounts.isEmpty()) {
      for (Map.Entry<String, String> l : labels.entrySet()) {
        if (existingAntiAffinityCounts.getOrDefault(new TopologyPair(l.getKey(), l.getValue()), 0L)
            > 0) {
          return Optional.of(REASON_EXISTING_ANTI_AFFINITY);
        }
      }
    }
    return Optional.empty();
  }

  private boolean satisfiesAffinity(Map<String, String> labels) {
    boolean podsExist = true;
    for (Term t : affinity) {
      String v = labels.get(t.topologyKey());
      if (v == null) {
        return false; // every topology label must be on the node
      }
      if (affinityCounts.getOrDefault(new TopologyPair(t.topologyKey(), v), 0L) <= 0) {
        podsExist = false;
      }
    }
    // the first of a series of pods with affinity to themselves may go anywhere
    return podsExist || (affinityCounts.isEmpty() && matchesAll(affinity, pod));
  }

  /** Upstream's {@code podMatchesAllAffinityTerms}: false for no terms. */
  private static boolean matchesAll(List<Term> terms, Pod p) {
    if (terms.isEmpty()) {
      return false;
    }
    for (Term t : terms) {
      if (!t.matches(p, null)) {
        return false;
      }
    }
    return true;
  }

  private static void count(Map<TopologyPair, Long> counts, Node node, String key) {
    Map<String, String> labels = node.getMetadata().getLabels();
    String v = labels == null ? null : labels.get(key);
    if (v != null) {
      counts.merge(new TopologyPair(key, v), 1L, Long::sum);
    }
  }

  /** Whether the pod has required pod anti-affinity terms (kept per placed pod by the caller). */
  public static boolean hasRequiredAntiAffinity(Pod pod) {
    Affinity a = pod.getSpec() == null ? null : pod.getSpec().getAffinity();
    return a != null
        && a.getPodAntiAffinity() != null
        && a.getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() != null
        && !a.getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().isEmpty();
  }

  private static List<Term> required(Pod pod, boolean anti) {
    Affinity a = pod.getSpec() == null ? null : pod.getSpec().getAffinity();
    if (a == null) {
      return List.of();
    }
    List<PodAffinityTerm> terms =
        anti
            ? (a.getPodAntiAffinity() == null
                ? null
                : a.getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution())
            : (a.getPodAffinity() == null
                ? null
                : a.getPodAffinity().getRequiredDuringSchedulingIgnoredDuringExecution());
    if (terms == null || terms.isEmpty()) {
      return List.of();
    }
    return terms.stream().map(t -> Term.of(pod, t)).toList();
  }
}
