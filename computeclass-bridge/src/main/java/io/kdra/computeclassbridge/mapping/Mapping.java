package io.kdra.computeclassbridge.mapping;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import java.util.List;

/**
 * What one ComputeClass implies: the desired generated objects and what was left out.
 *
 * @param alternatives the subrequests, in priority order
 * @param deviceClasses one per accelerator type used, sorted by name, each labelled as used by this
 *     ComputeClass only (merging with other users is the applier's business)
 * @param templates one per namespace, sorted by namespace; empty when there are no alternatives
 * @param skipped priorities without an accelerator, or repeating an earlier one: expected, not an
 *     error
 * @param problems priorities that name an accelerator but cannot be mapped: the ComputeClass is
 *     degraded
 */
public record Mapping(
    List<Alternative> alternatives,
    List<DeviceClass> deviceClasses,
    List<ResourceClaimTemplate> templates,
    List<PriorityNote> skipped,
    List<PriorityNote> problems) {

  public Mapping {
    alternatives = List.copyOf(alternatives);
    deviceClasses = List.copyOf(deviceClasses);
    templates = List.copyOf(templates);
    skipped = List.copyOf(skipped);
    problems = List.copyOf(problems);
  }
}
