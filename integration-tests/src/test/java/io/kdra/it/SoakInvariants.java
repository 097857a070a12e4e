package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.Dra;
import io.kdra.it.services.NodeFiles;
import io.kdra.it.services.Stack;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The chaos soak's invariants ({@link ChaosSoakIT}), each an assertion on the cluster and the
 * nodes' files as they are now, counted as it is checked: {@link #afterEachOperation} after every
 * operation, {@link #settled} once the faults stopped (inside an await: each must hold within the
 * soak's bound).
 *
 * <p>Settled: no claim is left being deleted that no existing pod has reserved; no claim is
 * reserved for a pod that no longer exists; no CDI spec or checkpoint entry on a node lacks its
 * allocated claim, no CDI spec lacks its checkpoint entry (a failed prepare takes its spec back),
 * and every bound pod was prepared and its claims have their CDI spec and checkpoint entry on its
 * node; every pod not bound has PodScheduled=False with a message, and none is pending that could
 * run (its claim allocated, or a device free); every node's pool is published whole and untainted;
 * no driver's TLS handshake was refused; no gang is partly bound (of its pods, none or at least
 * minCount); every ComputeClass's template and DeviceClasses are what the bridge makes of it, and
 * nothing is left of deleted ones ({@link SoakBridge}); the sharing nodes' simulated GPUs hold what
 * their checkpoints imply ({@link SoakSharing}).
 */
final class SoakInvariants {

  private final Stack stack;
  private final KubernetesClient client;
  private final List<String> nodes;

  /** Each node's devices, as its simulated inventory has them. */
  private final Map<String, Integer> devicesOf;

  private final Map<String, String> nodeOfPod = new HashMap<>();
  private int invariantChecks;

  private final SoakBridge bridge;
  private final SoakSharing sharing;

  /** The nodes of the whole GPUs, which the soak's own claims take. */
  private final List<String> wholeGpuNodes;

  SoakInvariants(
      Stack stack,
      List<String> nodes,
      List<String> wholeGpuNodes,
      Map<String, Integer> devicesOf,
      SoakBridge bridge,
      SoakSharing sharing) {
    this.bridge = bridge;
    this.sharing = sharing;
    this.wholeGpuNodes = List.copyOf(wholeGpuNodes);
    this.stack = stack;
    this.client = stack.client;
    this.nodes = List.copyOf(nodes);
    this.devicesOf = Map.copyOf(devicesOf);
  }

  /** How many invariant checks were made so far. */
  int checks() {
    return invariantChecks;
  }

  /** After every operation: no device in two claims' allocations, no pod's node changed. */
  void afterEachOperation() {
    assertNoDeviceInTwoClaims();
    assertNoPodChangedNode();
  }

  /** Once the faults stopped and it settled. */
  void settled() {
    assertNoClaimBeingDeletedUnlessInUse();
    assertNoReservationForAGonePod();
    assertNoPreparedStateWithoutItsClaim();
    assertEveryBoundPodPreparedOnItsNode();
    assertEveryBoundPodsClaimsAllocatedOnItsNodeAndReservedForIt();
    assertEveryPendingPodHasAReason();
    assertNoPodPendingWhileItCouldRun();
    assertSlicesMatchInventoriesUntainted();
    assertNoHandshakeRefused();
    assertNoGangPartlyBound();
    assertBridgeConverged();
    assertSharedGpusMatchCheckpoints();
    assertNoDeviceInTwoClaims();
    assertNoPodChangedNode();
  }

  /**
   * Issue 39's invariant on the sharing nodes: their simulated GPUs' MIG instances, MPS daemons,
   * compute modes and time slices are what the claims in their drivers' checkpoints imply.
   */
  void assertSharedGpusMatchCheckpoints() {
    invariantChecks++;
    sharing.assertGpusMatchCheckpoints();
  }

  /** Every ComputeClass's DeviceClasses and template are the bridge's mapping of it. */
  void assertBridgeConverged() {
    invariantChecks++;
    bridge.assertConverged();
  }

  /** No driver's TLS handshake with a publisher was refused, certificate rotations included. */
  private void assertNoHandshakeRefused() {
    invariantChecks++;
    assertThat(SoakTls.refusals(stack, nodes)).as("handshakes refused").isZero();
  }

  /** A pod's node, once set, never changes. */
  void assertNoPodChangedNode() {
    invariantChecks++;
    for (Pod p : client.pods().inNamespace(stack.namespace).list().getItems()) {
      String node = p.getSpec().getNodeName();
      if (node != null) {
        String before = nodeOfPod.putIfAbsent(p.getMetadata().getUid(), node);
        assertThat(before == null || before.equals(node))
            .as("%s bound to %s, then %s", p.getMetadata().getName(), before, node)
            .isTrue();
      }
    }
  }

  /**
   * Issue 39's invariant: every bound pod (not being deleted) was prepared by its node's kubelet,
   * and each of its claims has its CDI spec and its checkpoint entry on that node (a damaged
   * checkpoint or a driver stopped mid-prepare must lose neither).
   */
  private void assertEveryBoundPodPreparedOnItsNode() {
    invariantChecks++;
    for (Pod p : client.pods().inNamespace(stack.namespace).list().getItems()) {
      String node = p.getSpec().getNodeName();
      if (node == null || p.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      TestKubelet.Prepared prepared = stack.nodes.kubelet(node).prepared(p);
      assertThat(prepared)
          .as(
              "%s prepared on %s (last error: %s)",
              p.getMetadata().getName(), node, stack.nodes.kubelet(node).lastError(p))
          .isNotNull();
      List<String> specs = NodeFiles.cdiClaimUids(stack.nodes.cdiDir(node));
      List<String> entries = NodeFiles.checkpointClaimUids(stack.nodes.checkpointFile(node));
      for (var claim : prepared.claims()) {
        assertThat(specs)
            .as(
                "CDI spec of claim %s of %s on %s",
                claim.getName(), p.getMetadata().getName(), node)
            .contains(claim.getUid());
        assertThat(entries)
            .as(
                "checkpoint entry of claim %s of %s on %s",
                claim.getName(), p.getMetadata().getName(), node)
            .contains(claim.getUid());
      }
    }
  }

  /**
   * Every bound pod (not being deleted) has each of its claims allocated with devices of its node
   * only and reserved for it (or for its PodGroup): a pod bound while its claim was allocated again
   * elsewhere (a claim shared by pods scheduled at once) breaks it.
   */
  private void assertEveryBoundPodsClaimsAllocatedOnItsNodeAndReservedForIt() {
    invariantChecks++;
    Map<String, ResourceClaim> byName = new TreeMap<>();
    claims().forEach(c -> byName.put(c.getMetadata().getName(), c));
    List<String> broken = new ArrayList<>();
    for (Pod p : client.pods().inNamespace(stack.namespace).list().getItems()) {
      String node = p.getSpec().getNodeName();
      if (node == null
          || p.getMetadata().getDeletionTimestamp() != null
          || p.getSpec().getResourceClaims() == null) {
        continue;
      }
      String group = GangMembers.groupOf(p);
      for (var entry : p.getSpec().getResourceClaims()) {
        String claimName = claimName(p, entry);
        ResourceClaim claim = claimName == null ? null : byName.get(claimName);
        String what = p.getMetadata().getName() + "@" + node + " claim " + claimName;
        if (claim == null) {
          broken.add(what + ": missing");
          continue;
        }
        List<String> devices = Dra.devices(claim);
        if (devices.isEmpty() || !devices.stream().allMatch(d -> d.startsWith(node + "/"))) {
          broken.add(what + ": allocated " + devices);
        }
        var reserved =
            claim.getStatus() == null || claim.getStatus().getReservedFor() == null
                ? List.<ResourceClaimConsumerReference>of()
                : claim.getStatus().getReservedFor();
        boolean forIt =
            reserved.stream()
                .anyMatch(
                    r ->
                        p.getMetadata().getUid().equals(r.getUid())
                            || (group != null
                                && !"pods".equals(r.getResource())
                                && group.equals(r.getName())));
        if (!forIt) {
          broken.add(
              what
                  + ": reserved for "
                  + reserved.stream().map(r -> r.getResource() + "/" + r.getName()).toList());
        }
      }
    }
    assertThat(broken).as("bound pods' claims not allocated on their node or not theirs").isEmpty();
  }

  /** The name of the claim of {@code pod}'s {@code entry}: its own, or its template's generated. */
  private static String claimName(Pod pod, PodResourceClaim entry) {
    if (entry.getResourceClaimName() != null) {
      return entry.getResourceClaimName();
    }
    if (pod.getStatus() == null || pod.getStatus().getResourceClaimStatuses() == null) {
      return null;
    }
    return pod.getStatus().getResourceClaimStatuses().stream()
        .filter(s -> entry.getName().equals(s.getName()))
        .map(s -> s.getResourceClaimName())
        .filter(Objects::nonNull)
        .findFirst()
        .orElse(null);
  }

  /**
   * Issue 40's invariant, once the faults stopped: every pending pod binds when capacity frees, so
   * no pod that could run is left pending while what it needs is free. A pod (not of a gang: see
   * {@link #assertNoGangPartlyBound}) could run when its claim exists (or, from a template, its
   * template does) and is not being deleted, and its claim's DeviceClasses exist (a ComputeClass's
   * go with it); it needs nothing more when its claim is allocated, one free whole GPU otherwise
   * (every whole GPU is of the soak's class, and every ComputeClass of the soak takes either GPU
   * type, which only the whole GPUs are), or for a pod of {@link SoakSharing} what {@link
   * SoakSharing#fits} says: a share of its shared GPU, a free placement of its MIG profile, any
   * device of its class with adminAccess.
   */
  private void assertNoPodPendingWhileItCouldRun() {
    invariantChecks++;
    List<ResourceClaim> claims = claims();
    Map<String, ResourceClaim> byName = new HashMap<>();
    claims.forEach(c -> byName.put(c.getMetadata().getName(), c));
    java.util.Set<String> published = new java.util.TreeSet<>(publishedUntaintedDevices());
    java.util.Set<String> wholeGpus = new java.util.TreeSet<>();
    published.stream()
        .filter(d -> wholeGpuNodes.contains(d.substring(0, d.indexOf('/'))))
        .forEach(wholeGpus::add);
    // adminAccess takes no device from anyone (upstream's allocator leaves such results out)
    java.util.Set<String> free = new java.util.TreeSet<>(wholeGpus);
    claims.forEach(
        c ->
            SoakSharing.results(c).stream()
                .filter(r -> !Boolean.TRUE.equals(r.getAdminAccess()))
                .forEach(r -> free.remove(r.getPool() + "/" + r.getDevice())));
    List<SoakGpus.MigPartition> partitions = SoakSharing.allocatedPartitions(claims);
    Map<String, io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate> templates =
        new HashMap<>();
    client
        .resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate.class)
        .inNamespace(stack.namespace)
        .list()
        .getItems()
        .forEach(t -> templates.put(t.getMetadata().getName(), t));
    java.util.Set<String> deviceClasses =
        client.resources(DeviceClass.class).list().getItems().stream()
            .map(c -> c.getMetadata().getName())
            .collect(java.util.stream.Collectors.toSet());
    List<String> couldRun = new ArrayList<>();
    for (Pod p : client.pods().inNamespace(stack.namespace).list().getItems()) {
      if (p.getSpec().getNodeName() != null
          || p.getMetadata().getDeletionTimestamp() != null
          || GangMembers.groupOf(p) != null) {
        continue;
      }
      var entry = p.getSpec().getResourceClaims().get(0);
      String claimName = entry.getResourceClaimName();
      if (claimName == null && p.getStatus() != null) {
        claimName =
            p.getStatus().getResourceClaimStatuses().stream()
                .map(s -> s.getResourceClaimName())
                .filter(java.util.Objects::nonNull)
                .findFirst()
                .orElse(null);
      }
      ResourceClaim claim = claimName == null ? null : byName.get(claimName);
      boolean exists =
          claim != null
              || (entry.getResourceClaimName() == null
                  && claimName == null
                  && templates.containsKey(entry.getResourceClaimTemplateName()));
      if (!exists || (claim != null && claim.getMetadata().getDeletionTimestamp() != null)) {
        continue;
      }
      if (claim != null && Dra.devices(claim).isEmpty() && !classesExist(claim, deviceClasses)) {
        // made from a ComputeClass's template before the ComputeClass and its classes went
        continue;
      }
      boolean allocated = !Dra.devices(claim).isEmpty();
      var request =
          (claim != null
                  ? claim.getSpec().getDevices()
                  : templates
                      .get(entry.getResourceClaimTemplateName())
                      .getSpec()
                      .getSpec()
                      .getDevices())
              .getRequests()
              .get(0)
              .getExactly();
      boolean sharingPod =
          request != null
              && (Boolean.TRUE.equals(request.getAdminAccess())
                  || SoakSharing.sharingClass(request.getDeviceClassName()));
      boolean fits =
          sharingPod
              ? SoakSharing.fits(request, published, wholeGpus, partitions)
              : !free.isEmpty();
      if (allocated || fits) {
        couldRun.add(
            p.getMetadata().getName()
                + (allocated
                    ? " (its claim is allocated)"
                    : sharingPod
                        ? " (its "
                            + request.getDeviceClassName()
                            + " fits: MIG partitions taken "
                            + partitions
                            + ")"
                        : " (free: " + free + ")"));
      }
    }
    assertThat(couldRun).as("pods pending that could run").isEmpty();
  }

  /**
   * Whether every request of {@code claim} has a DeviceClass that exists: its own, or one of its
   * alternatives' (a ComputeClass's template has those).
   */
  private static boolean classesExist(ResourceClaim claim, java.util.Set<String> deviceClasses) {
    return claim.getSpec().getDevices().getRequests().stream()
        .allMatch(
            r ->
                r.getExactly() != null
                    ? deviceClasses.contains(r.getExactly().getDeviceClassName())
                    : r.getFirstAvailable().stream()
                        .anyMatch(s -> deviceClasses.contains(s.getDeviceClassName())));
  }

  /** {@code pool/device} of every published device of the driver without a taint. */
  private List<String> publishedUntaintedDevices() {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> Stack.DRIVER.equals(s.getSpec().getDriver()))
        .flatMap(
            s ->
                s.getSpec().getDevices().stream()
                    .filter(d -> d.getTaints() == null || d.getTaints().isEmpty())
                    .map(d -> s.getSpec().getPool().getName() + "/" + d.getName()))
        .toList();
  }

  /** Each node's pool is published whole, with no taint left from a partition or a kill. */
  private void assertSlicesMatchInventoriesUntainted() {
    invariantChecks++;
    Map<String, Integer> published = new TreeMap<>();
    for (ResourceSlice s : client.resources(ResourceSlice.class).list().getItems()) {
      if (Stack.DRIVER.equals(s.getSpec().getDriver())
          && devicesOf.containsKey(s.getSpec().getNodeName())) {
        published.merge(
            s.getSpec().getNodeName(),
            (int)
                s.getSpec().getDevices().stream()
                    .filter(d -> d.getTaints() == null || d.getTaints().isEmpty())
                    .count(),
            Integer::sum);
      }
    }
    assertThat(published).as("untainted devices published per node").isEqualTo(devicesOf);
  }

  /**
   * No device is in two claims' allocations, a shared GPU's shares (each its {@code shareID}) and
   * devices taken with adminAccess apart; no two claims hold MIG partitions with a memory slice in
   * common.
   */
  void assertNoDeviceInTwoClaims() {
    invariantChecks++;
    List<ResourceClaim> claims = claims();
    List<String> devices =
        claims.stream()
            .flatMap(
                c ->
                    SoakSharing.results(c).stream()
                        .filter(r -> !Boolean.TRUE.equals(r.getAdminAccess()))
                        .map(
                            r ->
                                r.getPool()
                                    + "/"
                                    + r.getDevice()
                                    + (r.getShareID() == null ? "" : "#" + r.getShareID())
                                    + " ("
                                    + c.getMetadata().getName()
                                    + ")"))
            .toList();
    assertThat(devices.stream().map(d -> d.substring(0, d.indexOf(' '))).toList())
        .as("allocated devices: %s", devices)
        .doesNotHaveDuplicates();
    SoakSharing.assertNoOverlappingPartitions(claims);
  }

  /** A claim may wait in deletion only while a pod that exists still has it reserved. */
  private void assertNoClaimBeingDeletedUnlessInUse() {
    invariantChecks++;
    List<String> podUids = podUids();
    assertThat(claims())
        .as("claims being deleted, reserved by no pod that exists")
        .noneMatch(
            c ->
                c.getMetadata().getDeletionTimestamp() != null
                    && (c.getStatus() == null
                        || c.getStatus().getReservedFor() == null
                        || c.getStatus().getReservedFor().stream()
                            .noneMatch(r -> podUids.contains(r.getUid()))));
  }

  private List<String> podUids() {
    return client.pods().inNamespace(stack.namespace).list().getItems().stream()
        .map(p -> p.getMetadata().getUid())
        .toList();
  }

  private void assertNoReservationForAGonePod() {
    invariantChecks++;
    List<String> podUids = podUids();
    for (ResourceClaim c : claims()) {
      if (c.getStatus() != null && c.getStatus().getReservedFor() != null) {
        assertThat(c.getStatus().getReservedFor())
            .as("reservedFor of %s", c.getMetadata().getName())
            .allMatch(r -> podUids.contains(r.getUid()));
      }
    }
  }

  void assertNoPreparedStateWithoutItsClaim() {
    invariantChecks++;
    Map<String, ResourceClaim> byUid = new TreeMap<>();
    claims().forEach(c -> byUid.put(c.getMetadata().getUid(), c));
    for (String node : nodes) {
      for (String uid : NodeFiles.cdiClaimUids(stack.nodes.cdiDir(node))) {
        assertThat(byUid.get(uid)).as("claim of CDI spec %s on %s", uid, node).isNotNull();
        assertThat(Dra.devices(byUid.get(uid)))
            .as("allocation of claim %s on %s", uid, node)
            .anyMatch(d -> d.startsWith(node + "/"));
      }
      List<String> entries = NodeFiles.checkpointClaimUids(stack.nodes.checkpointFile(node));
      for (String uid : entries) {
        assertThat(byUid).as("claim of checkpoint entry %s on %s", uid, node).containsKey(uid);
      }
      // a prepare that failed (a full disk, a driver stopped mid-way) takes its spec back
      assertThat(NodeFiles.cdiClaimUids(stack.nodes.cdiDir(node)))
          .as("CDI specs on %s without a checkpoint entry", node)
          .allMatch(entries::contains);
    }
  }

  /**
   * A gang is placed whole or not at all: of a PodGroup's pods (none being deleted: the soak
   * deletes a gang's pods only with the gang), none bound or at least its minCount.
   */
  private void assertNoGangPartlyBound() {
    if (!GangMembers.served()) {
      return;
    }
    invariantChecks++;
    List<Pod> pods = client.pods().inNamespace(stack.namespace).list().getItems();
    for (var group : GangMembers.podGroups(client, stack.namespace).list().getItems()) {
      String name = group.getMetadata().getName();
      int minCount = GangMembers.minCount(group);
      List<String> bound =
          GangMembers.of(pods, name).stream()
              .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
              .filter(p -> p.getSpec().getNodeName() != null)
              .map(p -> p.getMetadata().getName() + "@" + p.getSpec().getNodeName())
              .toList();
      assertThat(bound.isEmpty() || bound.size() >= minCount)
          .as("gang %s partly bound: %s (minCount %d)", name, bound, minCount)
          .isTrue();
    }
  }

  private void assertEveryPendingPodHasAReason() {
    invariantChecks++;
    for (Pod p : client.pods().inNamespace(stack.namespace).list().getItems()) {
      if (p.getSpec().getNodeName() != null || p.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      assertThat(
              p.getStatus() == null || p.getStatus().getConditions() == null
                  ? List.of()
                  : p.getStatus().getConditions())
          .as("conditions of pending pod %s", p.getMetadata().getName())
          .anySatisfy(
              c -> {
                assertThat(c.getType()).isEqualTo("PodScheduled");
                assertThat(c.getStatus()).isEqualTo("False");
                assertThat(c.getMessage()).isNotBlank();
              });
    }
  }

  List<ResourceClaim> claims() {
    return client.resources(ResourceClaim.class).inNamespace(stack.namespace).list().getItems();
  }
}
