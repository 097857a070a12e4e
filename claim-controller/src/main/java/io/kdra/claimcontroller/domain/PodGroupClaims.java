package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.kdra.claimcontroller.domain.PodClaimResolver.Step;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A PodGroup's own claims ({@code spec.resourceClaims}, Kubernetes 1.37's {@code
 * DRAWorkloadResourceClaims}) and the decisions upstream makes about them, pure:
 *
 * <ul>
 *   <li>which pod claim entries use the group's claim ({@link #boundEntry}: upstream's {@code
 *       resourceclaim.BindTo}, the entry's name, {@code resourceClaimName} and {@code
 *       resourceClaimTemplateName} all equal to one of the group's), and so are reserved for the
 *       group ({@link #consumer}) rather than the pod;
 *   <li>what to create for each template entry ({@link #plan}: the resourceclaim controller's
 *       {@code handlePodGroupClaim}): {@code <podgroup>-<claim>-} plus a generated suffix, the
 *       PodGroup as controlling owner, the template's labels and annotations plus {@link
 *       Upstream#POD_CLAIM_NAME_ANNOTATION}, recorded in {@code status.resourceClaimStatuses}.
 * </ul>
 *
 * @param name the PodGroup's name
 * @param uid its UID
 * @param entries {@code spec.resourceClaims}, in spec order
 * @param statuses {@code status.resourceClaimStatuses}: entry name to claim name (null: no claim
 *     needed)
 */
public record PodGroupClaims(
    String name, String uid, List<Entry> entries, Map<String, String> statuses) {

  /** The API group of PodGroups, as {@code reservedFor} and owner references name it. */
  public static final String API_GROUP = "scheduling.k8s.io";

  /** One {@code spec.resourceClaims} entry; exactly one of the two names is set. */
  public record Entry(String name, String resourceClaimName, String resourceClaimTemplateName) {}

  public PodGroupClaims {
    entries = List.copyOf(entries);
    statuses = Collections.unmodifiableMap(new LinkedHashMap<>(statuses));
  }

  /** A group without claims of its own. */
  public static PodGroupClaims none(String name, String uid) {
    return new PodGroupClaims(name, uid, List.of(), Map.of());
  }

  /** Parses a PodGroup's {@code spec} and {@code status}, as JSON maps and lists. */
  public static PodGroupClaims parse(
      String name, String uid, Map<String, Object> spec, Map<String, Object> status) {
    List<Entry> entries = new ArrayList<>();
    if (spec != null && spec.get("resourceClaims") instanceof List<?> l) {
      for (Object o : l) {
        if (o instanceof Map<?, ?> m && m.get("name") instanceof String n) {
          entries.add(
              new Entry(
                  n,
                  m.get("resourceClaimName") instanceof String s ? s : null,
                  m.get("resourceClaimTemplateName") instanceof String t ? t : null));
        }
      }
    }
    Map<String, String> statuses = new LinkedHashMap<>();
    if (status != null && status.get("resourceClaimStatuses") instanceof List<?> l) {
      for (Object o : l) {
        if (o instanceof Map<?, ?> m && m.get("name") instanceof String n) {
          statuses.put(n, m.get("resourceClaimName") instanceof String c ? c : null);
        }
      }
    }
    return new PodGroupClaims(name, uid, entries, statuses);
  }

  /** The reference a claim's {@code reservedFor} holds for this group. */
  public ResourceClaimConsumerReference consumer() {
    return new ResourceClaimConsumerReferenceBuilder()
        .withApiGroup(API_GROUP)
        .withResource("podgroups")
        .withName(name)
        .withUid(uid)
        .build();
  }

  /**
   * The group's entry that the pod's claim entry uses, as upstream's {@code BindTo}: the pod is a
   * member of this group and the entry's name, claim name and template name all equal one of the
   * group's entries. Empty: the entry is the pod's own.
   */
  public Optional<Entry> boundEntry(Pod pod, PodResourceClaim podEntry) {
    if (!Optional.of(name).equals(PodGroupPolicy.groupOf(pod))) {
      return Optional.empty();
    }
    return entries.stream()
        .filter(e -> e.name().equals(podEntry.getName()))
        .filter(e -> Objects.equals(e.resourceClaimName(), podEntry.getResourceClaimName()))
        .filter(
            e ->
                Objects.equals(
                    e.resourceClaimTemplateName(), podEntry.getResourceClaimTemplateName()))
        .findFirst();
  }

  /**
   * Who a claim used through the pod's entry is reserved for: this group when the entry is bound to
   * it ({@link #boundEntry}), else the pod. {@code group} may be null (the pod names no group).
   */
  public static ResourceClaimConsumerReference consumerFor(
      Pod pod, PodGroupClaims group, PodResourceClaim podEntry) {
    if (group != null && group.boundEntry(pod, podEntry).isPresent()) {
      return group.consumer();
    }
    return podConsumer(pod);
  }

  /** The reference a claim's {@code reservedFor} holds for a pod. */
  public static ResourceClaimConsumerReference podConsumer(Pod pod) {
    return new ResourceClaimConsumerReferenceBuilder()
        .withResource("pods")
        .withName(pod.getMetadata().getName())
        .withUid(pod.getMetadata().getUid())
        .build();
  }

  /** Whether a consumer reference names a PodGroup. */
  public static boolean isPodGroup(ResourceClaimConsumerReference ref) {
    return API_GROUP.equals(ref.getApiGroup()) && "podgroups".equals(ref.getResource());
  }

  /**
   * The controlling owner PodGroup of an object: {@code controller: true}, kind {@code PodGroup},
   * apiVersion in {@value #API_GROUP} (any version, as upstream's {@code isForPodGroupByPod}).
   */
  public static Optional<OwnerReference> owningPodGroup(HasMetadata object) {
    if (object.getMetadata().getOwnerReferences() == null) {
      return Optional.empty();
    }
    return object.getMetadata().getOwnerReferences().stream()
        .filter(
            o ->
                Boolean.TRUE.equals(o.getController())
                    && "PodGroup".equals(o.getKind())
                    && o.getApiVersion() != null
                    && o.getApiVersion().startsWith(API_GROUP + "/"))
        .findFirst();
  }

  /** Whether some PodGroup controls {@code claim}. */
  public static boolean isGroupsClaim(ResourceClaim claim) {
    return owningPodGroup(claim).isPresent();
  }

  /** Whether this group (by UID) controls {@code claim}: upstream's {@code IsForPodGroup}. */
  public boolean controls(ResourceClaim claim) {
    return owningPodGroup(claim).map(o -> uid.equals(o.getUid())).orElse(false);
  }

  /**
   * Whether the pod's group (by name, which is all a pod knows) controls {@code claim}: upstream's
   * {@code isForPodGroupByPod}, which its {@code IsForPod} accepts for members.
   */
  public static boolean isForPodsGroup(Pod pod, ResourceClaim claim) {
    Optional<String> group = PodGroupPolicy.groupOf(pod);
    return group.isPresent()
        && pod.getMetadata().getNamespace().equals(claim.getMetadata().getNamespace())
        && owningPodGroup(claim).map(o -> group.get().equals(o.getName())).orElse(false);
  }

  /**
   * Whether {@code claim}'s {@code reservedFor} names the pod or, by name, its group: upstream's
   * {@code IsReservedForPod} with PodGroup reservations accepted.
   */
  public static boolean reservesPodOrGroup(ResourceClaim claim, Pod pod) {
    if (claim.getStatus() == null || claim.getStatus().getReservedFor() == null) {
      return false;
    }
    Optional<String> group = PodGroupPolicy.groupOf(pod);
    return claim.getStatus().getReservedFor().stream()
        .anyMatch(
            r ->
                pod.getMetadata().getUid().equals(r.getUid())
                    || (isPodGroup(r) && group.isPresent() && group.get().equals(r.getName())));
  }

  /**
   * What each template entry needs, as upstream's {@code handlePodGroupClaim}: the claim named in
   * the status when it exists and the group controls it ({@link Step.Use}); {@link Step.NotNeeded}
   * when the status names none; a claim created earlier for the entry (controlled by the group,
   * annotated with the entry's name), to be recorded ({@link Step.Record}); else one to create from
   * the template ({@link Step.Create}) or the template missing. Entries that name a claim need
   * nothing from the controller and have no step.
   */
  public List<Step> plan(String namespace, ClaimLookup lookup) {
    List<Step> steps = new ArrayList<>();
    for (Entry e : entries) {
      if (e.resourceClaimTemplateName() == null) {
        continue;
      }
      steps.add(step(namespace, e, lookup));
    }
    return steps;
  }

  private Step step(String namespace, Entry e, ClaimLookup lookup) {
    if (statuses.containsKey(e.name())) {
      String recorded = statuses.get(e.name());
      if (recorded == null) {
        return new Step.NotNeeded(e.name());
      }
      Optional<ResourceClaim> c = lookup.claim(namespace, recorded);
      if (c.isPresent() && controls(c.get())) {
        return new Step.Use(e.name(), c.get());
      }
      // deleted by accident, or no longer the group's: upstream then creates a new one
    }
    Optional<ResourceClaim> existing = existing(e.name(), lookup.ownedBy(namespace, uid));
    if (existing.isPresent()) {
      return new Step.Record(e.name(), existing.get());
    }
    return lookup
        .template(namespace, e.resourceClaimTemplateName())
        .<Step>map(t -> new Step.Create(e.name(), desired(namespace, e.name(), t), t))
        .orElse(new Step.MissingTemplate(e.name(), e.resourceClaimTemplateName()));
  }

  /**
   * The group's claim for entry {@code entry} among {@code claims}: recorded in the status, else
   * created for it earlier (controlled by the group, annotated with the entry's name, not being
   * deleted; the first by name when several). Used for the members' entries bound to the group.
   */
  public Optional<ResourceClaim> claimFor(String namespace, String entry, ClaimLookup lookup) {
    String recorded = statuses.get(entry);
    if (recorded != null) {
      Optional<ResourceClaim> c = lookup.claim(namespace, recorded);
      if (c.isPresent() && controls(c.get())) {
        return c;
      }
    }
    return existing(entry, lookup.ownedBy(namespace, uid));
  }

  private Optional<ResourceClaim> existing(String entry, List<ResourceClaim> owned) {
    return owned.stream()
        .filter(this::controls)
        .filter(
            c ->
                c.getMetadata().getAnnotations() != null
                    && entry.equals(
                        c.getMetadata().getAnnotations().get(Upstream.POD_CLAIM_NAME_ANNOTATION)))
        .filter(c -> c.getMetadata().getDeletionTimestamp() == null)
        .min((a, b) -> a.getMetadata().getName().compareTo(b.getMetadata().getName()));
  }

  /**
   * The claim to create for entry {@code entry} from {@code template}: as upstream, generateName
   * {@code <podgroup>-<entry>-} (truncated as a pod's, {@link ClaimNaming}), the group as
   * controlling owner ({@code scheduling.k8s.io/v1beta1}, no {@code blockOwnerDeletion}), the
   * template's labels, its annotations plus the entry's name, its spec.
   */
  public ResourceClaim desired(String namespace, String entry, ResourceClaimTemplate template) {
    return TemplateClaims.fromTemplate(
        namespace, ClaimNaming.generateName(name, entry), controllerRef(), entry, template);
  }

  /** The owner reference upstream puts on the claims it creates for a PodGroup. */
  public OwnerReference controllerRef() {
    return new OwnerReferenceBuilder()
        .withApiVersion(PodGroupPolicy.API_VERSION)
        .withKind("PodGroup")
        .withName(name)
        .withUid(uid)
        .withController(true)
        .build();
  }

  /**
   * The {@code status.resourceClaimStatuses} to apply once {@code made} (entry to claim name) are
   * created or found: every entry recorded now or made, sorted by name. Upstream applies only the
   * entries of one pass; applying them all keeps an entry recorded by an earlier pass owned by the
   * same field manager (a server-side apply drops the manager's list entries it leaves out).
   */
  public Map<String, String> statusesWith(Map<String, String> made) {
    Map<String, String> all = new TreeMap<>();
    statuses.forEach(
        (k, v) -> {
          if (v != null) {
            all.put(k, v);
          }
        });
    all.putAll(made);
    return all;
  }
}
