package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.kdra.core.model.NewerFields;
import java.util.ArrayList;
import java.util.List;

/** A ResourceSlice with its devices wrapped as {@link CandidateDevice}s; built once. */
public final class SliceInfo {

  private final ResourceSlice slice;
  private final String name;
  private final String driver;
  private final String poolName;
  private final long generation;
  private final long resourceSliceCount;
  private final List<CandidateDevice> devices;
  private final boolean usesCompatibilityGroups;
  private final List<String> skipNodeOperations;

  SliceInfo(ResourceSlice slice) {
    this.slice = slice;
    ResourceSliceSpec spec = slice.getSpec();
    this.name =
        slice.getMetadata() == null || slice.getMetadata().getName() == null
            ? ""
            : slice.getMetadata().getName();
    this.driver = spec.getDriver();
    this.poolName = spec.getPool().getName();
    this.generation = spec.getPool().getGeneration() == null ? 0 : spec.getPool().getGeneration();
    this.resourceSliceCount =
        spec.getPool().getResourceSliceCount() == null ? 1 : spec.getPool().getResourceSliceCount();
    List<CandidateDevice> list = new ArrayList<>();
    if (spec.getDevices() != null) {
      for (Device d : spec.getDevices()) {
        list.add(new CandidateDevice(this, d));
      }
    }
    this.devices = List.copyOf(list);
    this.usesCompatibilityGroups =
        devices.stream()
            .filter(CandidateDevice::consumesCounters)
            .flatMap(d -> d.device().getConsumesCounters().stream())
            .anyMatch(c -> !NewerFields.compatibilityGroups(c).isEmpty());
    this.skipNodeOperations = NewerFields.skipNodeOperations(spec);
  }

  public String name() {
    return name;
  }

  public String driver() {
    return driver;
  }

  public String poolName() {
    return poolName;
  }

  long generation() {
    return generation;
  }

  long resourceSliceCount() {
    return resourceSliceCount;
  }

  public List<CandidateDevice> devices() {
    return devices;
  }

  ResourceSlice slice() {
    return slice;
  }

  String nodeName() {
    String n = slice.getSpec().getNodeName();
    return n == null || n.isEmpty() ? null : n;
  }

  boolean allNodes() {
    return Boolean.TRUE.equals(slice.getSpec().getAllNodes());
  }

  NodeSelector nodeSelector() {
    return slice.getSpec().getNodeSelector();
  }

  boolean perDeviceNodeSelection() {
    return Boolean.TRUE.equals(slice.getSpec().getPerDeviceNodeSelection());
  }

  /** Whether a device declares {@code compatibilityGroups} on one of its counter consumptions. */
  boolean usesCompatibilityGroups() {
    return usesCompatibilityGroups;
  }

  /** The slice's {@code skipNodeOperations}, as written; empty when none. */
  List<String> skipNodeOperations() {
    return skipNodeOperations;
  }

  boolean hasSharedCounters() {
    return slice.getSpec().getSharedCounters() != null
        && !slice.getSpec().getSharedCounters().isEmpty();
  }
}
