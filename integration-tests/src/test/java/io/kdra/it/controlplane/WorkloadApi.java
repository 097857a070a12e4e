package io.kdra.it.controlplane;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Kubernetes 1.37's Workload API (scheduling.k8s.io/v1beta1: Workload, PodGroup) and PodGroup-level
 * claims, beta and off by default: the test control planes turn them on where the version has them,
 * so that gangs can be tested (GangSchedulingIT). Pods that name no PodGroup are unaffected, so the
 * other tests see the API server they saw before.
 */
public final class WorkloadApi {

  /**
   * The feature gates: the API and its pod field, claims at PodGroup level, and (alpha) the
   * PodGroup's {@code schedulingConstraints}, which the API server drops without it.
   */
  static final String FEATURE_GATES =
      "GenericWorkload=true,DRAWorkloadResourceClaims=true,TopologyAwareWorkloadScheduling=true";

  /** A beta API group version new since 1.24 is not served unless asked for. */
  static final String RUNTIME_CONFIG = "scheduling.k8s.io/v1beta1=true";

  private WorkloadApi() {}

  /** Whether {@code version} (e.g. 1.37.2) serves the Workload API at v1beta1. */
  public static boolean servedBy(String version) {
    String[] parts = version.split("\\.");
    int major = Integer.parseInt(parts[0]);
    int minor = Integer.parseInt(parts[1]);
    return major > 1 || minor >= 37;
  }

  /** kube-apiserver's flags that turn it on, by flag name; none before 1.37 (unknown gates). */
  static Map<String, String> apiServerFlags(String version) {
    Map<String, String> flags = new LinkedHashMap<>();
    if (servedBy(version)) {
      flags.put("--feature-gates", FEATURE_GATES);
      flags.put("--runtime-config", RUNTIME_CONFIG);
    }
    return flags;
  }
}
