package io.kdra.kubectl;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.kdra.alloc.cli.Inputs;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodClaimResolver.Step;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.core.alloc.AllocatorOptions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Would a manifest's objects fit now? Adds them to the live state as {@code kubectl apply} would
 * (namespaced objects without a namespace get the current one; claims from templates are made as
 * the claim-controller makes them), then takes the manifest's pods in order through {@link PodWhy},
 * each placed pod's allocations and node counting for the next, as the controller would schedule
 * them. Claims of the manifest that none of its pods uses are tried alone ({@link ClaimWhy}).
 * Nothing is written to the cluster. Pure.
 */
final class WhatIfRun {

  private WhatIfRun() {}

  /**
   * One manifest object's answer.
   *
   * @param object {@code pod/ns/name} or {@code resourceclaim/ns/name}
   * @param node where it would run (or fit), else null
   * @param detail its devices when it fits, else why not (the controller's message)
   */
  record Row(String object, boolean fits, String node, String detail) {}

  static List<Row> run(
      Inputs manifest, String namespace, ClusterState live, AllocatorOptions options) {
    manifest.claims.forEach(c -> defaultNamespace(c.getMetadata(), namespace));
    manifest.templates.forEach(t -> defaultNamespace(t.getMetadata(), namespace));
    manifest.pods.forEach(p -> defaultNamespace(p.getMetadata(), namespace));
    ClusterState state =
        live.plus(manifest.templates, manifest.classes, manifest.slices, manifest.nodes);
    int uid = 0;
    for (ResourceClaim c : manifest.claims) {
      state = state.withClaim(withUid(c, "what-if-claim-" + ++uid));
    }
    List<Row> rows = new ArrayList<>();
    Set<String> used = new HashSet<>();
    for (Pod given : manifest.pods) {
      Pod pod = given;
      if (pod.getMetadata().getUid() == null) {
        pod =
            new PodBuilder(pod)
                .editMetadata()
                .withUid("what-if-pod-" + ++uid)
                .endMetadata()
                .build();
      }
      state = withTemplateClaims(pod, state);
      PodWhy.Answer a = PodWhy.explain(pod, state, options);
      a.claims().forEach(c -> used.add(key(c.getMetadata())));
      String object = "pod/" + key(pod.getMetadata());
      if (a.state() == PodWhy.State.FITS || a.state() == PodWhy.State.BOUND) {
        List<String> devices = new ArrayList<>();
        for (ResourceClaim c : a.claims()) {
          AllocationResult r = a.allocations().get(c.getMetadata().getUid());
          if (r != null) {
            state =
                state.withClaim(
                    new ResourceClaimBuilder(c)
                        .editOrNewStatus()
                        .withAllocation(r)
                        .endStatus()
                        .build());
          } else {
            r = c.getStatus() == null ? null : c.getStatus().getAllocation();
          }
          if (r != null) {
            devices.add("claim " + c.getMetadata().getName() + ": " + Words.devices(r));
          }
        }
        state =
            state.withPod(
                new PodBuilder(pod).editOrNewSpec().withNodeName(a.node()).endSpec().build());
        rows.add(
            new Row(
                object,
                true,
                a.node(),
                devices.isEmpty() ? "no claims" : String.join("; ", devices)));
      } else {
        rows.add(new Row(object, false, null, a.message()));
      }
    }
    for (ResourceClaim c : manifest.claims) {
      if (used.contains(key(c.getMetadata())) || PodWhy.allocated(c)) {
        continue;
      }
      ResourceClaim current =
          state.claim(c.getMetadata().getNamespace(), c.getMetadata().getName()).orElseThrow();
      ClaimWhy.Answer a = ClaimWhy.explain(current, state, options);
      rows.add(
          new Row(
              "resourceclaim/" + key(c.getMetadata()),
              a.fitsOn() != null,
              a.fitsOn(),
              a.message()));
    }
    return rows;
  }

  /** The state with the claims the claim-controller would create from the pod's templates. */
  private static ClusterState withTemplateClaims(Pod pod, ClusterState state) {
    PodClaimResolver.Resolution r = PodClaimResolver.resolve(pod, state.lookup(), TemplateMode.OWN);
    for (Step.Create create : r.of(Step.Create.class)) {
      ResourceClaim desired = create.desired();
      ResourceClaim made =
          new ResourceClaimBuilder(desired)
              .editMetadata()
              .withName(desired.getMetadata().getGenerateName() + "what-if")
              .withUid(pod.getMetadata().getUid() + "-" + create.entry())
              .endMetadata()
              .build();
      state = state.withClaim(made);
    }
    return state;
  }

  private static ResourceClaim withUid(ResourceClaim c, String uid) {
    if (c.getMetadata().getUid() != null) {
      return c;
    }
    return new ResourceClaimBuilder(c).editMetadata().withUid(uid).endMetadata().build();
  }

  private static void defaultNamespace(ObjectMeta m, String namespace) {
    if (m.getNamespace() == null || m.getNamespace().isEmpty()) {
      m.setNamespace(namespace);
    }
  }

  private static String key(ObjectMeta m) {
    return m.getNamespace() + "/" + m.getName();
  }
}
