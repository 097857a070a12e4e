package io.kdra.alloc.cli;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.alloc.Allocator;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.alloc.ClaimOutcome;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import io.kdra.core.alloc.NodeSelectors;
import io.kdra.core.alloc.PodScheduler;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The what-if run: allocates pending claims against the inputs, pod by pod (claims of a pod
 * together on one node), or claim by claim without pods, each allocation consuming devices for the
 * next. A pod's claims that are allocated already (in the input or for an earlier pod, such as a
 * claim shared by several pods) are kept as they are and restrict the pod to the nodes their
 * {@code nodeSelector}s allow, as in kube-scheduler. Pending claims that no pod references are
 * allocated on their own after the pods. Failures are reported per attempt, in order.
 */
final class WhatIf {

  /** The outcome: every pending claim (allocated or not) and one line per failure. */
  record Report(List<ResourceClaim> claims, List<String> failures) {}

  private final Inputs in;
  private final AllocatorOptions options;
  private final String onlyNode;

  WhatIf(Inputs in, AllocatorOptions options, String onlyNode) {
    this.in = in;
    this.options = options;
    this.onlyNode = onlyNode;
  }

  Report run() {
    List<ResourceClaim> pending = new ArrayList<>();
    Map<String, ResourceClaim> byKey = new LinkedHashMap<>();
    List<ResourceClaim> allocated = new ArrayList<>();
    for (ResourceClaim c : in.claims) {
      if (c.getStatus() != null && c.getStatus().getAllocation() != null) {
        allocated.add(c);
      } else {
        pending.add(c);
      }
      byKey.putIfAbsent(key(c.getMetadata()), c);
    }
    AllocationSnapshot snapshot = AllocationSnapshot.of(in.slices,
        new InMemoryDeviceClassLister(in.classes), AllocatedState.fromClaims(allocated));
    List<Node> nodes = nodes(snapshot);
    List<String> failures = new ArrayList<>();
    Set<String> referenced = new HashSet<>();
    for (Pod pod : in.pods) {
      List<ResourceClaim> claims = new ArrayList<>();
      String missing = podClaims(pod, byKey, pending, claims);
      claims.forEach(c -> referenced.add(key(c.getMetadata())));
      String podKey = key(pod.getMetadata());
      if (missing != null) {
        failures.add(podKey + ": cannot allocate: " + missing);
        continue;
      }
      // as kube-scheduler: claims allocated already (in the input, or for an earlier pod) are
      // not allocated again, but their node selectors decide where the pod may go; a claim an
      // earlier pod failed to get is tried again with this pod's claims
      List<ResourceClaim> todo = claims.stream().filter(c -> !isAllocated(c)).toList();
      List<NodeSelector> pinned = NodeSelectors.ofAllocated(claims);
      if (!todo.isEmpty()) {
        snapshot = place(snapshot, nodes, pod, todo, pinned, failures);
      } else if (!claims.isEmpty()
          && nodes.stream().noneMatch(n -> PodScheduler.podFits(pod, n, pinned))) {
        failures.add(podKey + ": cannot schedule: "
            + PodScheduler.noMatchingNode(nodes.size(), !pinned.isEmpty()));
      }
    }
    for (ResourceClaim c : pending) {
      if (!referenced.contains(key(c.getMetadata()))) {
        snapshot = place(snapshot, nodes, null, List.of(c), List.of(), failures);
      }
    }
    return new Report(pending, failures);
  }

  private static boolean isAllocated(ResourceClaim c) {
    return c.getStatus() != null && c.getStatus().getAllocation() != null;
  }

  private AllocationSnapshot place(AllocationSnapshot snapshot, List<Node> nodes, Pod pod,
      List<ResourceClaim> claims, List<NodeSelector> pinned, List<String> failures) {
    PodScheduler.Placement p = PodScheduler.schedule(new Allocator(snapshot, options), nodes,
        pod, claims, pinned);
    AllocatedState state = snapshot.allocated();
    for (ClaimOutcome o : p.outcomes()) {
      if (o instanceof ClaimOutcome.Allocated a) {
        if (a.claim().getStatus() == null) {
          a.claim().setStatus(new ResourceClaimStatus());
        }
        a.claim().getStatus().setAllocation(a.result());
        state = state.plus(a.result());
      } else if (o instanceof ClaimOutcome.NotAllocated n) {
        failures.add(o.claimKey() + ": cannot allocate: " + n.explanation().summary());
      }
    }
    return snapshot.withAllocated(state);
  }

  /**
   * Collects a pod's claims, allocated or not, each once (instantiating templates as
   * {@code <pod>-<entry>}, added to {@code byKey} and {@code pending}); returns a message when a
   * referenced claim or template is missing.
   */
  private String podClaims(Pod pod, Map<String, ResourceClaim> byKey,
      List<ResourceClaim> pending, List<ResourceClaim> out) {
    if (pod.getSpec() == null || pod.getSpec().getResourceClaims() == null) {
      return null;
    }
    String ns = namespace(pod.getMetadata());
    for (PodResourceClaim prc : pod.getSpec().getResourceClaims()) {
      ResourceClaim c = null;
      if (prc.getResourceClaimName() != null) {
        c = byKey.get(ns + "/" + prc.getResourceClaimName());
        if (c == null) {
          return "resource claim " + prc.getResourceClaimName() + " not found";
        }
      } else if (prc.getResourceClaimTemplateName() != null) {
        ResourceClaimTemplate t = in.templates.stream()
            .filter(x -> namespace(x.getMetadata()).equals(ns)
                && prc.getResourceClaimTemplateName().equals(x.getMetadata().getName()))
            .findFirst().orElse(null);
        if (t == null) {
          return "resource claim template " + prc.getResourceClaimTemplateName() + " not found";
        }
        String name = pod.getMetadata().getName() + "-" + prc.getName();
        c = byKey.get(ns + "/" + name);
        if (c == null) {
          c = instantiate(t, pod, prc, name);
          pending.add(c);
          byKey.put(ns + "/" + name, c);
        }
      }
      ResourceClaim found = c;
      if (found != null && out.stream().noneMatch(x -> x == found)) {
        out.add(found); // a claim named twice is used once
      }
    }
    return null;
  }

  private static ResourceClaim instantiate(ResourceClaimTemplate t, Pod pod,
      PodResourceClaim prc, String name) {
    ResourceClaim c = new ResourceClaim();
    c.setApiVersion("resource.k8s.io/v1");
    c.setKind("ResourceClaim");
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    meta.setNamespace(namespace(pod.getMetadata()));
    Map<String, String> annotations = new LinkedHashMap<>();
    if (t.getSpec().getMetadata() != null) {
      if (t.getSpec().getMetadata().getLabels() != null) {
        meta.setLabels(new LinkedHashMap<>(t.getSpec().getMetadata().getLabels()));
      }
      if (t.getSpec().getMetadata().getAnnotations() != null) {
        annotations.putAll(t.getSpec().getMetadata().getAnnotations());
      }
    }
    annotations.put("resource.kubernetes.io/pod-claim-name", prc.getName());
    meta.setAnnotations(annotations);
    c.setMetadata(meta);
    c.setSpec(t.getSpec().getSpec());
    return c;
  }

  /** Node objects, else one node per node name the slices mention; filtered by --node. */
  private List<Node> nodes(AllocationSnapshot snapshot) {
    List<Node> nodes = new ArrayList<>(in.nodes);
    if (nodes.isEmpty()) {
      TreeSet<String> names = new TreeSet<>(snapshot.inventory().nodeNames());
      if (onlyNode != null) {
        names.add(onlyNode);
      }
      if (names.isEmpty()) {
        names.add("node");
      }
      names.forEach(n -> nodes.add(new NodeBuilder().withNewMetadata().withName(n)
          .endMetadata().build()));
    }
    if (onlyNode != null) {
      nodes.removeIf(n -> !onlyNode.equals(n.getMetadata().getName()));
    }
    return nodes;
  }

  static String key(ObjectMeta m) {
    return namespace(m) + "/" + (m == null ? "" : m.getName());
  }

  static String namespace(ObjectMeta m) {
    return m == null || m.getNamespace() == null ? "default" : m.getNamespace();
  }
}
