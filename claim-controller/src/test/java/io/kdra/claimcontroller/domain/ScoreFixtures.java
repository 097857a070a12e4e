package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.kdra.claimcontroller.domain.NodeFilter.NodeUsage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Fixtures for the score tests, shaped as upstream's {@code st.MakePod()} / {@code MakeNode()}. */
final class ScoreFixtures {

  private ScoreFixtures() {}

  /** A node with these labels (pairs). */
  static NodeBuilder node(String name, String... labels) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .withLabels(pairs(labels))
        .endMetadata()
        .withNewSpec()
        .endSpec()
        .withNewStatus()
        .endStatus();
  }

  /** Upstream's {@code makeNode}: allocatable CPU in millicores and memory in bytes. */
  static Node node(String name, long milliCpu, long memory) {
    return node(name)
        .editStatus()
        .withAllocatable(
            Map.of(
                "cpu", new Quantity(milliCpu + "m"),
                "memory", new Quantity(String.valueOf(memory))))
        .endStatus()
        .build();
  }

  /** A pod in namespace {@code ns} without containers ({@code st.MakePod().Obj()}). */
  static PodBuilder pod(String name, String... labels) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace("ns")
        .withName(name)
        .withUid("uid-" + name)
        .withLabels(pairs(labels))
        .endMetadata()
        .withNewSpec()
        .endSpec();
  }

  /** Adds a container requesting these resources (pairs: name, quantity), as {@code Req}. */
  static PodBuilder req(PodBuilder pod, String... requests) {
    Map<String, Quantity> r = new LinkedHashMap<>();
    pairs(requests).forEach((k, v) -> r.put(k, new Quantity(v)));
    return pod.editSpec()
        .addToContainers(
            new ContainerBuilder()
                .withName("c" + pod.buildSpec().getContainers().size())
                .withNewResources()
                .withRequests(r)
                .endResources()
                .build())
        .endSpec();
  }

  /** The pod bound to {@code node}. */
  static Pod on(PodBuilder pod, String node) {
    return pod.editSpec().withNodeName(node).endSpec().build();
  }

  static Map<String, String> pairs(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  /** The scoring input over {@code nodes} (all feasible) with {@code placed} pods. */
  static NodeScoring.Input input(Pod pod, List<Node> nodes, Collection<Pod> placed) {
    return input(pod, nodes, nodes, placed, Map.of());
  }

  static NodeScoring.Input input(
      Pod pod,
      List<Node> feasible,
      List<Node> all,
      Collection<Pod> placed,
      Map<String, Map<String, String>> namespaceLabels) {
    Map<String, NodeUsage> usage = new HashMap<>();
    placed.forEach(p -> usage.merge(p.getSpec().getNodeName(), NodeUsage.of(p), NodeUsage::plus));
    List<Pod> withAffinity = new ArrayList<>();
    placed.stream().filter(InterPodAffinityScore::hasPodAffinity).forEach(withAffinity::add);
    return new NodeScoring.Input(
        pod,
        feasible,
        all,
        usage,
        NodeFilter::allocatable,
        () -> placed,
        withAffinity,
        () -> namespaceLabels);
  }

  /** Node name to score, in the nodes' order, for assertions that read like upstream's lists. */
  static Map<String, Long> named(List<Node> nodes, long[] scores) {
    Map<String, Long> m = new LinkedHashMap<>();
    for (int i = 0; i < nodes.size(); i++) {
      m.put(nodes.get(i).getMetadata().getName(), scores == null ? null : scores[i]);
    }
    return m;
  }
}
