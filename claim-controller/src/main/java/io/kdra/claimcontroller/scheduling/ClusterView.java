package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.List;
import java.util.Optional;

/**
 * Read port for scheduling: what the informers have seen. Answers may lag behind the API server;
 * {@link RecentWrites} covers this controller's own writes until the informers catch up, and
 * every write is made with optimistic concurrency so that a stale answer never overwrites newer
 * state.
 */
public interface ClusterView {

  List<Node> nodes();

  /** All pods (to count what bound pods request on each node). */
  List<Pod> pods();

  List<ResourceClaim> claims();

  Optional<ResourceClaim> claim(String namespace, String name);

  Optional<ResourceClaimTemplate> template(String namespace, String name);

  List<ResourceSlice> slices();

  List<DeviceClass> deviceClasses();
}
