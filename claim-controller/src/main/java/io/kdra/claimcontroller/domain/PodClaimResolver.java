package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Decides, for each entry of a pod's {@code spec.resourceClaims}, which claim it uses or what must
 * happen first. This is upstream's {@code resourceclaim.Name} plus the resourceclaim controller's
 * {@code handleClaim}, as a pure function of the pod and a {@link ClaimLookup}:
 *
 * <ul>
 *   <li>{@code resourceClaimName}: that claim, once it exists.
 *   <li>{@code resourceClaimTemplateName} with an entry in {@code
 *       pod.status.resourceClaimStatuses}: no claim when the entry names none; else the named claim
 *       if the pod controls it.
 *   <li>Otherwise a claim controlled by the pod and annotated with the entry name (created before a
 *       restart, or by kube-controller-manager): in {@link TemplateMode#OWN} it is used and
 *       recorded in the pod status; in {@link TemplateMode#ADOPT} the entry waits for
 *       kube-controller-manager to record it, as kube-scheduler does.
 *   <li>Otherwise, in {@link TemplateMode#OWN}, one is created from the template (or the template
 *       is reported missing); in {@link TemplateMode#ADOPT}, the entry waits.
 * </ul>
 */
public final class PodClaimResolver {

  private PodClaimResolver() {}

  /** What one pod claim entry needs. */
  public sealed interface Step {
    /** The pod claim entry name. */
    String entry();

    /** The entry's claim exists and belongs to the pod. */
    record Use(String entry, ResourceClaim claim) implements Step {}

    /** The entry needs no claim ({@code resourceClaimName} unset in the pod status). */
    record NotNeeded(String entry) implements Step {}

    /** Create this claim from {@code template}, then record it in the pod status. */
    record Create(String entry, ResourceClaim desired, ResourceClaimTemplate template)
        implements Step {}

    /** The claim exists but the pod status does not name it yet: record it (own mode only). */
    record Record(String entry, ResourceClaim claim) implements Step {}

    /** The entry's template does not exist (yet). */
    record MissingTemplate(String entry, String template) implements Step {}

    /**
     * The entry names a ResourceClaim that does not exist (yet): the pod is unschedulable until it
     * does, as kube-scheduler reports it.
     */
    record MissingClaim(String entry, String claim) implements Step {}

    /** Nothing to do but wait: {@code reason} says for what. */
    record Wait(String entry, String reason) implements Step {}
  }

  /** The steps for all entries, in spec order. */
  public record Resolution(List<Step> steps) {

    /** Whether every entry has its claim (or needs none): the pod can be scheduled. */
    public boolean complete() {
      return steps.stream()
          .allMatch(
              s ->
                  s instanceof Step.Use || s instanceof Step.NotNeeded || s instanceof Step.Record);
    }

    /** Entry name to claim, for the entries that have one, in spec order. */
    public Map<String, ResourceClaim> claims() {
      Map<String, ResourceClaim> m = new LinkedHashMap<>();
      for (Step s : steps) {
        if (s instanceof Step.Use u) {
          m.put(u.entry(), u.claim());
        } else if (s instanceof Step.Record r) {
          m.put(r.entry(), r.claim());
        }
      }
      return m;
    }

    /** Steps of one kind. */
    public <T extends Step> List<T> of(Class<T> kind) {
      return steps.stream().filter(kind::isInstance).map(kind::cast).toList();
    }
  }

  /** Resolves every claim entry of {@code pod}, a pod of no PodGroup with claims. */
  public static Resolution resolve(Pod pod, ClaimLookup lookup, TemplateMode mode) {
    return resolve(pod, lookup, mode, null);
  }

  /**
   * Resolves every claim entry of {@code pod}, a member of {@code group} (null: of none, or of one
   * without claims of its own). An entry bound to the group's ({@link PodGroupClaims#boundEntry})
   * through a template uses the group's claim, created for the group ({@link PodGroupClaims#plan}),
   * never one of its own: as upstream's {@code handleClaim}, it is recorded in the pod's status
   * once the group's claim exists, and waits until then.
   */
  public static Resolution resolve(
      Pod pod, ClaimLookup lookup, TemplateMode mode, PodGroupClaims group) {
    List<Step> steps = new ArrayList<>();
    for (PodResourceClaim entry : Pods.claimEntries(pod)) {
      steps.add(
          group != null
                  && entry.getResourceClaimTemplateName() != null
                  && group.boundEntry(pod, entry).isPresent()
              ? groupStep(pod, entry, lookup, mode, group)
              : step(pod, entry, lookup, mode));
    }
    return new Resolution(steps);
  }

  private static Step groupStep(
      Pod pod,
      PodResourceClaim entry,
      ClaimLookup lookup,
      TemplateMode mode,
      PodGroupClaims group) {
    String ns = pod.getMetadata().getNamespace();
    String name = entry.getName();
    Optional<PodResourceClaimStatus> recorded = recordedStatus(pod, name);
    if (recorded.isPresent()) {
      String claimName = recorded.get().getResourceClaimName();
      if (claimName == null) {
        return new Step.NotNeeded(name);
      }
      Optional<ResourceClaim> claim = lookup.claim(ns, claimName);
      if (claim.isPresent()
          && (TemplateClaims.isForPod(pod, claim.get())
              || PodGroupClaims.isForPodsGroup(pod, claim.get()))) {
        return new Step.Use(name, claim.get());
      }
    }
    Optional<ResourceClaim> groups = group.claimFor(ns, name, lookup);
    if (groups.isPresent()) {
      return mode == TemplateMode.OWN
          ? new Step.Record(name, groups.get())
          : awaitStatus(name, groups.get());
    }
    return new Step.Wait(
        name,
        "waiting for the claim of PodGroup "
            + group.name()
            + "'s entry "
            + name
            + " (from ResourceClaimTemplate "
            + entry.getResourceClaimTemplateName()
            + ")");
  }

  private static Step step(Pod pod, PodResourceClaim entry, ClaimLookup lookup, TemplateMode mode) {
    String ns = pod.getMetadata().getNamespace();
    String name = entry.getName();
    if (entry.getResourceClaimName() != null) {
      return lookup
          .claim(ns, entry.getResourceClaimName())
          .<Step>map(c -> new Step.Use(name, c))
          .orElse(new Step.MissingClaim(name, entry.getResourceClaimName()));
    }
    String templateName = entry.getResourceClaimTemplateName();
    if (templateName == null) {
      // Neither field: an API newer than this controller; never guess.
      return new Step.Wait(
          name, "pod claim entry " + name + " names neither a claim nor a " + "template");
    }
    Optional<PodResourceClaimStatus> recorded = recordedStatus(pod, name);
    if (recorded.isPresent()) {
      String claimName = recorded.get().getResourceClaimName();
      if (claimName == null) {
        return new Step.NotNeeded(name);
      }
      Optional<ResourceClaim> claim = lookup.claim(ns, claimName);
      // upstream's IsForPod accepts the claim of the pod's PodGroup too (by the group's name)
      if (claim.isPresent()
          && (TemplateClaims.isForPod(pod, claim.get())
              || PodGroupClaims.isForPodsGroup(pod, claim.get()))) {
        return new Step.Use(name, claim.get());
      }
      // Deleted by accident, or no longer the pod's: upstream then creates a new one.
    }
    Optional<ResourceClaim> existing =
        TemplateClaims.findExisting(pod, name, lookup.ownedBy(ns, pod.getMetadata().getUid()));
    if (existing.isPresent()) {
      return mode == TemplateMode.OWN
          ? new Step.Record(name, existing.get())
          : awaitStatus(name, existing.get());
    }
    if (mode == TemplateMode.ADOPT) {
      return new Step.Wait(
          name,
          "waiting for kube-controller-manager to create the claim for "
              + "entry "
              + name
              + " from ResourceClaimTemplate "
              + templateName);
    }
    Optional<ResourceClaimTemplate> template = lookup.template(ns, templateName);
    return template
        .<Step>map(t -> new Step.Create(name, TemplateClaims.desired(pod, name, t), t))
        .orElse(new Step.MissingTemplate(name, templateName));
  }

  /**
   * In adopt mode a claim kube-controller-manager made is used once it has recorded it in the pod's
   * status, as kube-scheduler waits for it ({@code resourceclaim.Name}): the kubelet finds a
   * template's claim only through that status, and refuses to start a pod bound before it ("not
   * created yet"). The status write wakes the pod.
   */
  private static Step awaitStatus(String entry, ResourceClaim claim) {
    return new Step.Wait(
        entry,
        "waiting for kube-controller-manager to record claim "
            + claim.getMetadata().getName()
            + " in the pod's status for entry "
            + entry);
  }

  private static Optional<PodResourceClaimStatus> recordedStatus(Pod pod, String entry) {
    if (pod.getStatus() == null || pod.getStatus().getResourceClaimStatuses() == null) {
      return Optional.empty();
    }
    return pod.getStatus().getResourceClaimStatuses().stream()
        .filter(s -> entry.equals(s.getName()))
        .findFirst();
  }
}
