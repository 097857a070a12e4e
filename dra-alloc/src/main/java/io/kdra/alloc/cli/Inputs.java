package io.kdra.alloc.cli;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayList;
import java.util.List;

/** The objects read from all input files, each kind in input order. */
public final class Inputs {
  public final List<DeviceClass> classes = new ArrayList<>();
  public final List<ResourceSlice> slices = new ArrayList<>();
  public final List<ResourceClaim> claims = new ArrayList<>();
  public final List<ResourceClaimTemplate> templates = new ArrayList<>();
  public final List<Node> nodes = new ArrayList<>();
  public final List<Pod> pods = new ArrayList<>();
}
