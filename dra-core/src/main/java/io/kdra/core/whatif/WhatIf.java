package io.kdra.core.whatif;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.AllocationSnapshot;
import io.kdra.core.alloc.Allocator;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.alloc.ClaimOutcome;
import io.kdra.core.alloc.InMemoryDeviceClassLister;
import io.kdra.core.alloc.NodeSelectors;
import io.kdra.core.alloc.PodScheduler;
import io.kdra.core.extended.ExtendedResourceClaims;
import io.kdra.core.extended.ExtendedResourceClasses;
import io.kdra.core.extended.ExtendedResourceFit;
import io.kdra.core.extended.ExtendedResourceRequests;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeSet;

/**
 * The what-if run: allocates pending claims against the inputs, pod by pod (claims of a pod
 * together on one node), or claim by claim without pods, each allocation consuming devices for the
 * next. A pod's claims that are allocated already (in the input or for an earlier pod, such as a
 * claim shared by several pods) are kept as they are and restrict the pod to the nodes their {@code
 * nodeSelector}s allow, as in kube-scheduler. Pending claims that no pod references are allocated
 * on their own after the pods. Failures are reported per attempt, in order.
 *
 * <p>A pod's extended resources (KEP-5004) are placed as kube-scheduler places them: a node that
 * advertises one in {@code status.allocatable} serves it by its device plugin (it must fit beside
 * the input's pods bound there); otherwise the DeviceClass that names it serves it through the
 * pod's special claim, reported as {@code <pod>-extended-resources} (the API server would add a
 * random suffix), allocated with the pod's other claims.
 */
public final class WhatIf {

  /** The objects of a run, each kind in input order. */
  public record Inputs(
      List<DeviceClass> classes,
      List<ResourceSlice> slices,
      List<ResourceClaim> claims,
      List<ResourceClaimTemplate> templates,
      List<Node> nodes,
      List<Pod> pods) {}

  /** The outcome: every pending claim (allocated or not) and one line per failure. */
  public record Report(List<ResourceClaim> claims, List<String> failures) {}

  private final Inputs in;
  private final AllocatorOptions options;
  private final String onlyNode;

  /**
   * @param in the objects; pending claims get their allocations written into their status
   * @param onlyNode the only node to consider, or null for all
   */
  public WhatIf(Inputs in, AllocatorOptions options, String onlyNode) {
    this.in = in;
    this.options = options;
    this.onlyNode = onlyNode;
  }

  public Report run() {
    List<ResourceClaim> pending = new ArrayList<>();
    Map<String, ResourceClaim> byKey = new LinkedHashMap<>();
    List<ResourceClaim> allocated = new ArrayList<>();
    for (ResourceClaim c : in.claims()) {
      if (c.getStatus() != null && c.getStatus().getAllocation() != null) {
        allocated.add(c);
      } else {
        pending.add(c);
      }
      byKey.putIfAbsent(key(c.getMetadata()), c);
    }
    AllocationSnapshot snapshot =
        AllocationSnapshot.of(
            in.slices(),
            new InMemoryDeviceClassLister(in.classes()),
            AllocatedState.fromClaims(allocated));
    List<Node> nodes = nodes(snapshot);
    List<String> failures = new ArrayList<>();
    Set<String> referenced = new HashSet<>();
    for (Pod pod : in.pods()) {
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
      Map<String, Long> extended = ExtendedResourceRequests.of(pod);
      if (!extended.isEmpty()) {
        snapshot =
            placeWithExtended(
                snapshot, nodes, pod, extended, todo, pinned, pending, referenced, failures);
      } else if (!todo.isEmpty()) {
        snapshot = place(snapshot, nodes, pod, todo, pinned, failures);
      } else if (!claims.isEmpty()
          && nodes.stream().noneMatch(n -> PodScheduler.podFits(pod, n, pinned))) {
        failures.add(
            podKey
                + ": cannot schedule: "
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

  private AllocationSnapshot place(
      AllocationSnapshot snapshot,
      List<Node> nodes,
      Pod pod,
      List<ResourceClaim> claims,
      List<NodeSelector> pinned,
      List<String> failures) {
    PodScheduler.Placement p =
        PodScheduler.schedule(new Allocator(snapshot, options), nodes, pod, claims, pinned);
    return commit(snapshot, p, failures);
  }

  /**
   * Places a pod with extended resources: nodes that fit them, in runs that need the same special
   * claim, the first run where everything fits wins (the first fitting node by name).
   */
  private AllocationSnapshot placeWithExtended(
      AllocationSnapshot snapshot,
      List<Node> nodes,
      Pod pod,
      Map<String, Long> extended,
      List<ResourceClaim> todo,
      List<NodeSelector> pinned,
      List<ResourceClaim> pending,
      Set<String> referenced,
      List<String> failures) {
    String podKey = key(pod.getMetadata());
    ExtendedResourceClasses classes = ExtendedResourceClasses.of(in.classes());
    List<Node> fitting = new ArrayList<>();
    Map<String, SortedMap<String, Long>> viaDra = new HashMap<>();
    Map<String, String> rejected = new LinkedHashMap<>();
    for (Node n : nodes) {
      var fit = ExtendedResourceFit.fit(extended, classes, n, used(n, pod));
      if (fit instanceof ExtendedResourceFit.NodeFit.Fits f
          && PodScheduler.podFits(pod, n, pinned)) {
        fitting.add(n);
        viaDra.put(n.getMetadata().getName(), f.viaDra());
      } else if (fit instanceof ExtendedResourceFit.NodeFit.Unfit u) {
        rejected.put(n.getMetadata().getName(), u.reason());
      }
    }
    if (fitting.isEmpty()) {
      failures.add(
          podKey
              + ": cannot schedule: "
              + (rejected.isEmpty()
                  ? PodScheduler.noMatchingNode(nodes.size(), !pinned.isEmpty())
                  : "0/"
                      + nodes.size()
                      + " nodes fit its extended resources: "
                      + String.join(", ", new TreeSet<>(rejected.values()))));
      return snapshot;
    }
    PodScheduler.Placement firstRefusal = null;
    int i = 0;
    while (i < fitting.size()) {
      SortedMap<String, Long> want = viaDra.get(fitting.get(i).getMetadata().getName());
      int j = i;
      while (j < fitting.size()
          && Objects.equals(want, viaDra.get(fitting.get(j).getMetadata().getName()))) {
        j++;
      }
      List<Node> run = fitting.subList(i, j);
      i = j;
      List<ResourceClaim> claims = new ArrayList<>(todo);
      ResourceClaim special = null;
      if (!want.isEmpty()) {
        special =
            ExtendedResourceClaims.desired(
                pod, ExtendedResourceClaims.spec(pod, want, classes), null);
        special.getMetadata().setName(pod.getMetadata().getName() + "-extended-resources");
        special.getMetadata().setGenerateName(null);
        special.getMetadata().setNamespace(namespace(pod.getMetadata()));
        claims.add(special);
      }
      if (claims.isEmpty()) {
        return snapshot; // the device plugins serve it all and nothing else is to allocate
      }
      PodScheduler.Placement p =
          PodScheduler.schedule(new Allocator(snapshot, options), run, pod, claims, pinned);
      if (p.allocated()) {
        if (special != null) {
          pending.add(special);
          referenced.add(key(special.getMetadata()));
        }
        return commit(snapshot, p, failures);
      }
      if (firstRefusal == null) {
        firstRefusal = p;
      }
    }
    return commit(snapshot, firstRefusal, failures);
  }

  /** What the input's non-terminal pods bound to {@code node} request of extended resources. */
  private Map<String, Long> used(Node node, Pod except) {
    Map<String, Long> used = new HashMap<>();
    for (Pod p : in.pods()) {
      if (p != except
          && p.getSpec() != null
          && node.getMetadata().getName().equals(p.getSpec().getNodeName())
          && (p.getStatus() == null
              || !List.of("Succeeded", "Failed").contains(p.getStatus().getPhase()))) {
        ExtendedResourceRequests.of(p).forEach((k, v) -> used.merge(k, v, Long::sum));
      }
    }
    return used;
  }

  /** Records a placement's allocations on its claims and in the state, and its failures. */
  private static AllocationSnapshot commit(
      AllocationSnapshot snapshot, PodScheduler.Placement p, List<String> failures) {
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
   * Collects a pod's claims, allocated or not, each once (instantiating templates as {@code
   * <pod>-<entry>}, added to {@code byKey} and {@code pending}); returns a message when a
   * referenced claim or template is missing.
   */
  private String podClaims(
      Pod pod,
      Map<String, ResourceClaim> byKey,
      List<ResourceClaim> pending,
      List<ResourceClaim> out) {
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
        ResourceClaimTemplate t =
            in.templates().stream()
                .filter(
                    x ->
                        namespace(x.getMetadata()).equals(ns)
                            && prc.getResourceClaimTemplateName().equals(x.getMetadata().getName()))
                .findFirst()
                .orElse(null);
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

  private static ResourceClaim instantiate(
      ResourceClaimTemplate t, Pod pod, PodResourceClaim prc, String name) {
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
    List<Node> nodes = new ArrayList<>(in.nodes());
    if (nodes.isEmpty()) {
      TreeSet<String> names = new TreeSet<>(snapshot.inventory().nodeNames());
      if (onlyNode != null) {
        names.add(onlyNode);
      }
      if (names.isEmpty()) {
        names.add("node");
      }
      names.forEach(
          n -> nodes.add(new NodeBuilder().withNewMetadata().withName(n).endMetadata().build()));
    }
    if (onlyNode != null) {
      nodes.removeIf(n -> !onlyNode.equals(n.getMetadata().getName()));
    }
    return nodes;
  }

  /** {@code namespace/name}, the namespace "default" when none is set. */
  public static String key(ObjectMeta m) {
    return namespace(m) + "/" + (m == null ? "" : m.getName());
  }

  static String namespace(ObjectMeta m) {
    return m == null || m.getNamespace() == null ? "default" : m.getNamespace();
  }
}
