package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodClaimResolver.Step;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodGroups;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.events.EventRecorder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * Claims from templates: kube-controller-manager's resourceclaim controller's job, done here in
 * {@link TemplateMode#OWN} only. For each entry of a pod naming a template, the claim is created
 * and recorded in the pod's status; for a member of a PodGroup, the group's claims first ({@link
 * PodGroupClaims#plan}), recorded in the group's status. In {@link TemplateMode#ADOPT}
 * kube-controller-manager makes them, and the pod's claims are only resolved. Not part of a
 * scheduling cycle: no lock; claims of different pods are created concurrently.
 */
final class TemplateClaimController {

  /** Striped locks serialising the claim creation of each PodGroup. */
  private static final Object[] GROUP_LOCKS = new Object[64];

  static {
    for (int i = 0; i < GROUP_LOCKS.length; i++) {
      GROUP_LOCKS[i] = new Object();
    }
  }

  private final DraManager dra;
  private final ClaimWriter claims;
  private final PodWriter pods;
  private final EventRecorder events;
  private final TemplateMode mode;
  private final ClaimTracer tracer;
  private final BooleanSupplier mayWrite;

  /** Where the PodGroups' claims are recorded; set when gangs are placed. */
  private volatile PodGroups groups = PodGroups.NONE;

  /**
   * Its {@code settings.mayWrite()} is asked right before each write (this replica's Lease is
   * fresh): creating a claim from a template can take a while under a slow API server.
   */
  TemplateClaimController(
      DraManager dra, PodScheduling.Writers writers, PodScheduling.Settings settings) {
    this.dra = dra;
    this.claims = writers.claims();
    this.pods = writers.pods();
    this.events = writers.events();
    this.mode = settings.mode();
    this.tracer = settings.tracer();
    this.mayWrite = settings.mayWrite();
  }

  /** Records the PodGroups' claims in {@code groups} from now on. */
  void recordGroupClaimsIn(PodGroups groups) {
    this.groups = groups;
  }

  /** The pod's claims, a member of {@code group} (null: of none), creating none. */
  PodClaimResolver.Resolution resolve(Pod pod, PodGroupClaims group) {
    return PodClaimResolver.resolve(pod, dra.claims(), mode, group);
  }

  /**
   * Ensures the claims of {@code pod}, a member of {@code group} (null: of none), exist and are
   * recorded in its status; returns the resolution, or empty once this replica's Lease is no longer
   * fresh. The group's own claims are made first, and the entries bound to them use them.
   */
  Optional<PodClaimResolver.Resolution> ensure(Pod pod, PodGroupClaims group) {
    if (mode != TemplateMode.OWN) {
      // nothing to create or record: kube-controller-manager does (the resolver says what waits)
      return Optional.of(resolve(pod, group));
    }
    if (group != null && !ensureGroupClaims(pod.getMetadata().getNamespace(), group)) {
      return Optional.empty();
    }
    PodClaimResolver.Resolution r = resolve(pod, group);
    Map<String, String> record = new LinkedHashMap<>();
    for (Step.Record s : r.of(Step.Record.class)) {
      record.put(s.entry(), s.claim().getMetadata().getName());
    }
    for (Step.Create s : r.of(Step.Create.class)) {
      if (!mayWrite.getAsBoolean()) {
        return Optional.empty();
      }
      ResourceClaim created = create(pod, s);
      dra.recent().created(created);
      record.put(s.entry(), created.getMetadata().getName());
    }
    for (Step.MissingTemplate s : r.of(Step.MissingTemplate.class)) {
      // Upstream's reason and message shape, so that the two controllers read alike.
      events.warning(
          pod,
          "FailedResourceClaimCreation",
          "PodResourceClaim "
              + s.entry()
              + ": resource claim template \""
              + s.template()
              + "\": not found");
    }
    if (!record.isEmpty()) {
      if (!mayWrite.getAsBoolean()) {
        return Optional.empty();
      }
      pods.recordClaims(pod, record);
    }
    return Optional.of(r);
  }

  /** Creates one claim, traced from the template's write (a link) to the claim's (the root). */
  private ResourceClaim create(Pod pod, Step.Create s) {
    ClaimTracer.TraceSpan span = tracer.start(null, "create").link(TraceLinks.of(s.template()));
    try {
      ResourceClaim created = claims.create(s.desired(), span.annotations());
      span.attribute(
              "claim", created.getMetadata().getNamespace() + "/" + created.getMetadata().getName())
          .attribute("pod", Pods.key(pod))
          .end();
      return created;
    } catch (KubernetesClientException e) {
      span.end(e);
      if (ApiRefusal.isRefusal(e)) {
        // upstream's reason and message shape, with the API server's words unchanged
        String why =
            "PodResourceClaim "
                + s.entry()
                + ": create ResourceClaim "
                + nameOf(s.desired())
                + ": "
                + ApiRefusal.message(e);
        events.warning(pod, "FailedResourceClaimCreation", why);
        throw new ApiRefusal(why);
      }
      throw e;
    } catch (RuntimeException e) {
      span.end(e);
      throw e;
    }
  }

  /** A claim to create by its name, or the prefix the API server will complete. */
  private static String nameOf(ResourceClaim desired) {
    String name = desired.getMetadata().getName();
    return name != null && !name.isEmpty() ? name : desired.getMetadata().getGenerateName();
  }

  /**
   * Creates the PodGroup's claims from its templates, as upstream's resourceclaim controller does
   * for a PodGroup ({@link PodGroupClaims#plan}), and records them in the group's status. Done when
   * a member is attempted: this controller watches no PodGroups. Returns false once this replica's
   * Lease is no longer fresh.
   */
  private boolean ensureGroupClaims(String namespace, PodGroupClaims group) {
    if (group.entries().isEmpty()) {
      return true;
    }
    // members are attempted concurrently: one at a time per group, so that the second sees the
    // first's claim (upstream's single work queue per PodGroup does the same)
    synchronized (GROUP_LOCKS[Math.floorMod(group.uid().hashCode(), GROUP_LOCKS.length)]) {
      return ensureGroupClaimsLocked(namespace, group);
    }
  }

  private boolean ensureGroupClaimsLocked(String namespace, PodGroupClaims group) {
    List<Step> plan = group.plan(namespace, dra.claims());
    Map<String, String> made = new LinkedHashMap<>();
    for (Step s : plan) {
      if (s instanceof Step.Record rec) {
        made.put(rec.entry(), rec.claim().getMetadata().getName());
      } else if (s instanceof Step.Create c) {
        if (!mayWrite.getAsBoolean()) {
          return false;
        }
        ResourceClaim created = claims.create(c.desired(), Map.of());
        dra.recent().created(created);
        made.put(c.entry(), created.getMetadata().getName());
      }
    }
    if (!made.isEmpty()) {
      if (!mayWrite.getAsBoolean()) {
        return false;
      }
      groups.recordClaims(namespace, group.name(), group.statusesWith(made));
    }
    return true;
  }
}
