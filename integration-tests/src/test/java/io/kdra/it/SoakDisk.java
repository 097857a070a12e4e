package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.Dra;
import io.kdra.it.services.NodeFiles;
import io.kdra.it.services.Stack;
import io.kdra.it.support.PrivateTmpfs;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The chaos soak's full disk (issue 39): one node's driver runs in a private mount namespace with a
 * small tmpfs ({@link PrivateTmpfs}) under its CDI specs and checkpoint, which {@link SoakFaults}
 * fills for a while and then frees. node-c, because its two whole GPUs take the soak's own pods (so
 * pods keep landing there while it is full) and no other fault is tied to it (node-b's nvidia-smi,
 * the sharing nodes' simulated GPUs). Needs root; without it the node runs as the others do and the
 * fault is left out.
 */
final class SoakDisk {

  static final String NODE = "node-c";

  /** What the driver's error says when a file of a prepare cannot be written. */
  static final String CANNOT_WRITE = "cannot write the ";

  private static final String NO_SPACE = "No space left on device";

  /** The probe's claim and pod: one whole GPU, on {@link #NODE}. */
  static final String PROBE = "disk-probe";

  /** Longest wait, once the space is back, for the node's pending pods to be prepared. */
  private static final Duration STARTED = Duration.ofSeconds(90);

  /** Outside the stack's node directories, which a stack clears at start. */
  private final PrivateTmpfs disk =
      RealNode.runsAsRoot()
          ? PrivateTmpfs.over(Path.of("target", "soak-disk-" + NODE), "512k")
          : null;

  /** Whether the fault can be drawn (the mount needs root). */
  boolean available() {
    return disk != null;
  }

  /** {@code node}, its driver inside the disk's namespace where this is {@link #NODE}. */
  SimulatedNode onDisk(SimulatedNode node) {
    return disk != null && node.name().equals(NODE) ? node.withDriverMount(disk) : node;
  }

  /** Ends the namespace's holder; the mount goes with the driver. */
  void close() {
    if (disk != null) {
      disk.close();
    }
  }

  /**
   * Pages left free while full: one (a claim's spec fits, its checkpoint entry does not) or none.
   */
  private int pagesLeft;

  /**
   * Fills the disk but {@code pagesLeft} pages (one: a claim's spec fits, its checkpoint entry does
   * not; none: not even the spec) and creates the probe: a pod on {@link #NODE} whose prepare meets
   * the full disk, if a GPU is free there.
   */
  void fill(Stack stack, int pagesLeft) {
    this.pagesLeft = pagesLeft;
    disk.fill(pagesLeft);
    quietly(
        () ->
            stack
                .client
                .resource(Dra.claim(stack.namespace, PROBE, SoakSharing.WHOLE_CLASS, 1))
                .create());
    Pod probe = Dra.podWithClaim(stack.namespace, PROBE, PROBE);
    probe.getSpec().setNodeSelector(Map.of("kubernetes.io/hostname", NODE));
    quietly(() -> stack.client.resource(probe).create());
  }

  /**
   * Tops the disk up: a page a failed prepare's spec held for a moment, or a pod's deletion, may
   * have come back. Not while a spec lacks its entry: that page is the spec's, and giving another
   * back would let the kubelet's retry write the entry and hide a spec a failed prepare left.
   */
  void topUp(Stack stack) {
    if (orphans(stack).isEmpty()) {
      disk.fill(pagesLeft);
    }
  }

  /** The node's CDI specs (by claim UID) without their checkpoint entry. */
  private static List<String> orphans(Stack stack) {
    List<String> entries = NodeFiles.checkpointClaimUids(stack.nodes.checkpointFile(NODE));
    return NodeFiles.cdiClaimUids(stack.nodes.cdiDir(NODE)).stream()
        .filter(uid -> !entries.contains(uid))
        .toList();
  }

  /**
   * While full: a failed prepare takes its spec back. Each kubelet retry writes it for a moment
   * (the spec before the entry), so some look at the node must find no spec without its entry.
   */
  void assertNoSpecWithoutEntry(Stack stack) {
    // an unreadable directory reads as "no spec": that must not pass for "none left"
    assertThat(stack.nodes.cdiDir(NODE)).as("CDI spec directory of %s", NODE).isDirectory();
    List<List<String>> left = new java.util.ArrayList<>(List.of(List.of()));
    try {
      await("full disk: a moment with no CDI spec without its checkpoint entry on " + NODE)
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> {
                left.set(0, orphans(stack));
                return left.get(0).isEmpty();
              });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(
          "full disk: CDI specs on " + NODE + " left by failed prepares: " + left.get(0), e);
    }
  }

  /** The node's CDI specs and checkpoint entries by claim UID, for the soak's log. */
  String files(Stack stack) {
    return "CDI specs "
        + NodeFiles.cdiClaimUids(stack.nodes.cdiDir(NODE))
        + ", checkpoint entries "
        + NodeFiles.checkpointClaimUids(stack.nodes.checkpointFile(NODE));
  }

  /**
   * While full: the first pod on the node whose prepare failed for the lack of space (its error
   * names the file), or null; and no claim is half-prepared (each pod prepared there has its
   * claims' specs and checkpoint entries).
   */
  String failedForSpace(Stack stack) {
    TestKubelet kubelet = stack.nodes.kubelet(NODE);
    // a pod deleted between the reads is unprepared meanwhile: whole again on a fresh look
    await("full disk: no half-prepared claim on " + NODE)
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertPreparedPodsWhole(stack, kubelet));
    for (Pod p : podsOnNode(stack)) {
      String error = kubelet.lastError(p);
      if (kubelet.prepared(p) == null
          && error != null
          && error.contains(CANNOT_WRITE)
          && error.contains(NO_SPACE)) {
        return p.getMetadata().getName() + ": " + error;
      }
    }
    return null;
  }

  /**
   * Frees the space, deletes the probe (it must not wait past the fault: its node selector is no
   * soak pod's) and waits until every pod bound to the node is prepared there, whole.
   */
  void free(Stack stack) {
    disk.free();
    long back = System.nanoTime();
    quietly(
        () ->
            stack
                .client
                .pods()
                .inNamespace(stack.namespace)
                .withName(PROBE)
                .withGracePeriod(0)
                .delete());
    quietly(
        () ->
            stack
                .client
                .resources(ResourceClaim.class)
                .inNamespace(stack.namespace)
                .withName(PROBE)
                .delete());
    TestKubelet kubelet = stack.nodes.kubelet(NODE);
    await("full disk: every pod on " + NODE + " prepared once the space is back")
        .atMost(STARTED)
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              for (Pod p : podsOnNode(stack)) {
                if (!p.getMetadata().getName().equals(PROBE)) {
                  assertThat(kubelet.prepared(p))
                      .as(
                          "%s prepared (last error: %s)",
                          p.getMetadata().getName(), kubelet.lastError(p))
                      .isNotNull();
                }
              }
              assertPreparedPodsWhole(stack, kubelet);
            });
    System.out.printf(
        "[soak] full disk: every pod on %s prepared %d ms after the space came back%n",
        NODE, (System.nanoTime() - back) / 1_000_000);
  }

  /** Every pod the kubelet prepared on the node has its claims' specs and checkpoint entries. */
  private static void assertPreparedPodsWhole(Stack stack, TestKubelet kubelet) {
    // the kubelet's answers before the files: a prepare that ends between the reads wrote both
    List<TestKubelet.Prepared> prepared =
        podsOnNode(stack).stream()
            .map(kubelet::prepared)
            .filter(java.util.Objects::nonNull)
            .toList();
    List<String> specs = NodeFiles.cdiClaimUids(stack.nodes.cdiDir(NODE));
    List<String> entries = NodeFiles.checkpointClaimUids(stack.nodes.checkpointFile(NODE));
    for (TestKubelet.Prepared pod : prepared) {
      for (var claim : pod.claims()) {
        assertThat(specs)
            .as("full disk: CDI spec of prepared claim %s on %s", claim.getName(), NODE)
            .contains(claim.getUid());
        assertThat(entries)
            .as("full disk: checkpoint entry of prepared claim %s on %s", claim.getName(), NODE)
            .contains(claim.getUid());
      }
    }
  }

  private static void quietly(Runnable r) {
    try {
      r.run();
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      // there already, or gone already: a race with the soak's own operations
    }
  }

  private static List<Pod> podsOnNode(Stack stack) {
    return stack.client.pods().inNamespace(stack.namespace).list().getItems().stream()
        .filter(p -> NODE.equals(p.getSpec().getNodeName()))
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }
}
