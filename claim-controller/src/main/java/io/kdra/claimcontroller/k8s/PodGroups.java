package io.kdra.claimcontroller.k8s;

import io.kdra.claimcontroller.domain.PodGroupPolicy;
import java.util.Optional;

/** Reads PodGroups ({@code scheduling.k8s.io/v1beta1}, Kubernetes 1.37's Workload API). */
public interface PodGroups {

  /** The PodGroup's policy; empty when it does not exist (yet) or the API is not served. */
  Optional<PodGroupPolicy> get(String namespace, String name);

  /** For a cluster without the Workload API: no pod names a group that exists. */
  PodGroups NONE = (namespace, name) -> Optional.empty();
}
