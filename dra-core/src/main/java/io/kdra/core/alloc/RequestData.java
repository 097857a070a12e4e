package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import java.util.List;

/**
 * A request or subrequest prepared for the search: its class, how many devices it needs, and for
 * {@code All} the exact devices (computed up front from every visible pool).
 */
record RequestData(
    RequestSpec spec, DeviceClass deviceClass, int numDevices, List<Candidate> allDevices) {

  /** A device together with the pool it was found in. */
  record Candidate(CandidateDevice device, Pool pool) {}
}
