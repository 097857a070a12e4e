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
final class Inputs {
  final List<DeviceClass> classes = new ArrayList<>();
  final List<ResourceSlice> slices = new ArrayList<>();
  final List<ResourceClaim> claims = new ArrayList<>();
  final List<ResourceClaimTemplate> templates = new ArrayList<>();
  final List<Node> nodes = new ArrayList<>();
  final List<Pod> pods = new ArrayList<>();
}
