package io.kdra.computeclassbridge.model;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * GKE's cluster-scoped {@code ComputeClass} ({@code cloud.google.com/v1}), reduced to the fields
 * the bridge reads. Every other field survives a read-modify-write through the {@code additional}
 * maps of the nested types, so the bridge never drops what GKE or an admin wrote.
 */
@Group(ComputeClass.GROUP)
@Version(ComputeClass.VERSION)
@Kind("ComputeClass")
@Plural("computeclasses")
@Singular("computeclass")
@ShortNames({"cc", "ccs"})
public class ComputeClass extends CustomResource<ComputeClassSpec, ComputeClassStatus> {

  public static final String GROUP = "cloud.google.com";
  public static final String VERSION = "v1";

  @Override
  protected ComputeClassSpec initSpec() {
    return new ComputeClassSpec();
  }

  /**
   * No status until one is written: an empty one here would differ from what the server stores, and
   * a JSON patch computed against it would not apply there.
   */
  @Override
  protected ComputeClassStatus initStatus() {
    return null;
  }
}
