package io.kdra.devicedriver.sharing;

import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.prepare.PreparedClaim;
import java.util.Collection;
import java.util.Optional;

/**
 * Which namespaces' claims may use a node's MPS daemons at once. MPS isolates nothing between its
 * clients: every MPS claim's container gets the node's one {@code <mps-root>/shm} at {@code
 * /dev/shm} (the daemons' shared memory, one directory for all GPUs), so a client can read and
 * write the others' segments. The namespace is the tenant boundary Kubernetes gives, so by default
 * the node's MPS serves one namespace at a time: a claim of another namespace is refused while MPS
 * claims of the first are prepared, unless the node allows MPS across namespaces. Pure.
 */
final class MpsTenancy {
  static final String SETTING = "kdra.device-driver.sharing.mps-across-namespaces";

  /** The variable {@link GpuSharingSetup} writes into every MPS claim's CDI spec. */
  private static final String MPS_ENV =
      "\"CUDA_MPS_PIPE_DIRECTORY=" + GpuSharingSetup.CONTAINER_PIPE_DIR + "\"";

  private MpsTenancy() {}

  /**
   * Why {@code claim} may not use MPS on this node, or empty when it may.
   *
   * @param others the node's other prepared claims (the checkpoint)
   */
  static Optional<String> refusal(
      ClaimRef claim, Collection<PreparedClaim> others, boolean acrossNamespaces) {
    if (acrossNamespaces) {
      return Optional.empty();
    }
    return others.stream()
        .filter(MpsTenancy::usesMps)
        .filter(o -> !o.claim().namespace().equals(claim.namespace()))
        .findFirst()
        .map(o -> because(claim, o));
  }

  /** Whether a prepared claim's containers reach an MPS daemon (its spec names the pipe). */
  static boolean usesMps(PreparedClaim c) {
    return c.cdiSpec().contains(MPS_ENV);
  }

  private static String because(ClaimRef claim, PreparedClaim holder) {
    // an entry rebuilt from its spec after a damaged checkpoint has lost its namespace: it may be
    // another tenant's, so it counts as one until its pod is gone or the kubelet prepares it again
    String whose =
        holder.recovered()
            ? "a claim of unknown namespace (uid "
                + holder.claim().uid()
                + ", rebuilt from its CDI spec)"
            : "claim "
                + holder.claim().namespace()
                + "/"
                + holder.claim().name()
                + " (uid "
                + holder.claim().uid()
                + ")";
    return "MPS on this node serves "
        + whose
        + ", not of namespace "
        + claim.namespace()
        + ": MPS clients share the node's /dev/shm directory and isolate nothing between them, so"
        + " the node's MPS serves one namespace at a time; this claim waits until the other"
        + " namespace's MPS claims on the node are unprepared (an admin may allow MPS across"
        + " namespaces with "
        + SETTING
        + ", the chart's deviceDriver.config.sharing.mps-across-namespaces)";
  }
}
