package io.kdra.claimcontroller.domain;

/**
 * Names and limits shared with upstream Kubernetes (kube-controller-manager's resourceclaim
 * controller, kube-scheduler's DynamicResources plugin and the {@code resource.k8s.io/v1} API).
 * They must match exactly: where both this controller and kube-controller-manager run, a claim
 * created or allocated by either is found and used by the other.
 */
public final class Upstream {

  /** Finalizer that protects an allocated claim; added before allocation, removed after. */
  public static final String FINALIZER = "resource.kubernetes.io/delete-protection";

  /** Annotation on a template-derived claim; its value is the pod's claim entry name. */
  public static final String POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name";

  /** Most entries {@code status.reservedFor} may hold (API validation). */
  public static final int MAX_RESERVED_FOR = 256;

  /**
   * Longest generateName base: 63 characters for a name, minus the 5 random characters the API
   * server appends and one spare, as upstream computes it.
   */
  public static final int MAX_GENERATE_NAME_BASE = 57;

  /** Pod condition type the scheduler owns. */
  public static final String POD_SCHEDULED = "PodScheduled";

  /** Reason of {@link #POD_SCHEDULED}=False when no node fits. */
  public static final String REASON_UNSCHEDULABLE = "Unschedulable";

  /** Taint the node lifecycle controller sets on cordoned nodes. */
  public static final String TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable";

  private Upstream() {}
}
