package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Kdra;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.domain.Upstream;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Claims from templates ({@link TemplateClaimController}, own mode) end to end: created and
 * recorded in the pod's status once, whatever the informers show, and a missing template reported
 * on the pod.
 */
class TemplateClaimControllerTest extends SchedulingFixture {

  @Test
  void templateClaimIsCreatedRecordedAllocatedReservedAndThePodBound() {
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));

    assertThat(scheduling.schedule(pod)).isInstanceOf(Outcome.Waiting.class);
    ResourceClaim created = allClaims().get(0);
    assertThat(created.getMetadata().getName()).startsWith("web-gpu-");
    assertThat(created.getMetadata().getAnnotations())
        .containsEntry(Upstream.POD_CLAIM_NAME_ANNOTATION, "gpu")
        .containsEntry(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER);
    assertThat(get("web").getStatus().getResourceClaimStatuses())
        .singleElement()
        .satisfies(
            s -> assertThat(s.getResourceClaimName()).isEqualTo(created.getMetadata().getName()));

    assertThat(scheduling.schedule(get("web"))).isEqualTo(new Outcome.Bound("node-a"));
    ResourceClaim done = claim(created.getMetadata().getName());
    assertThat(done.getMetadata().getFinalizers()).containsExactly(Upstream.FINALIZER);
    assertThat(done.getStatus().getAllocation().getDevices().getResults().get(0).getDevice())
        .isEqualTo("dev-0");
    assertThat(done.getStatus().getReservedFor())
        .singleElement()
        .satisfies(r -> assertThat(r.getUid()).isEqualTo(pod.getMetadata().getUid()));
    assertThat(get("web").getSpec().getNodeName()).isEqualTo("node-a");
    assertThat(allClaims()).hasSize(1);
  }

  @Test
  void aClaimCreatedButNotYetInTheInformerIsNotCreatedTwice() {
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));
    scheduling.schedule(pod);
    // The informer lags: neither the claim nor the pod status is visible yet.
    view.hidden.add(allClaims().get(0).getMetadata().getName());
    scheduling.schedule(pod);
    assertThat(allClaims()).hasSize(1);
  }

  @Test
  void restartBetweenCreateAndStatusWriteReusesTheClaim() {
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));
    // What a crash right after the create leaves behind: the claim, no pod status entry.
    ResourceClaim orphan = client.resource(K.generated("web-gpu-x1y2z", pod, "gpu")).create();

    // A fresh process: new scheduling with empty memory of its own writes.
    newScheduling(TemplateMode.OWN).schedule(pod);

    assertThat(allClaims()).hasSize(1);
    assertThat(get("web").getStatus().getResourceClaimStatuses())
        .singleElement()
        .satisfies(
            s -> assertThat(s.getResourceClaimName()).isEqualTo(orphan.getMetadata().getName()));
  }

  @Test
  void missingTemplateIsReportedOnThePod() {
    Pod pod = create(K.podWithTemplate("web", "gpu", "nope"));
    assertThat(scheduling.schedule(pod))
        .isEqualTo(
            new Outcome.Unschedulable(
                "pod claim entry gpu: ResourceClaimTemplate nope does not exist",
                Map.of(),
                "ClaimMissing"));
    assertThat(client.v1().events().inNamespace(NS).list().getItems())
        .anySatisfy(
            e -> {
              assertThat(e.getReason()).isEqualTo("FailedResourceClaimCreation");
              assertThat(e.getMessage()).contains("\"nope\"");
              assertThat(e.getInvolvedObject().getName()).isEqualTo("web");
            });
    client.resource(K.template("nope")).create();
    scheduling.schedule(pod);
    assertThat(allClaims()).hasSize(1);
  }

  /**
   * A claim the API server refuses (its validation, an admission policy, a quota) is reported on
   * the pod with the API server's own message, as upstream's claim controller reports it
   * ("FailedResourceClaimCreation", "PodResourceClaim <entry>: create ResourceClaim <name>: ..."),
   * and the pod waits as unschedulable instead of failing its reconcile.
   */
  @Test
  void aClaimTheApiServerRefusesIsReportedOnThePodWithTheApiServersMessage() {
    String refusal =
        "ResourceClaim.resource.k8s.io \"web-gpu-\" is forbidden: ValidatingAdmissionPolicy"
            + " 'claims-need-a-team' with binding 'claims-need-a-team' denied request: every"
            + " claim needs a team label";
    server
        .expect()
        .post()
        .withPath("/apis/resource.k8s.io/v1/namespaces/" + NS + "/resourceclaims")
        .andReturn(
            403,
            new io.fabric8.kubernetes.api.model.StatusBuilder()
                .withStatus("Failure")
                .withReason("Forbidden")
                .withCode(403)
                .withMessage(refusal)
                .build())
        .once();
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));
    Outcome outcome = scheduling.schedule(pod);
    assertThat(outcome).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(((Outcome.Unschedulable) outcome).message()).endsWith(refusal);
    assertThat(client.v1().events().inNamespace(NS).list().getItems())
        .anySatisfy(
            e -> {
              assertThat(e.getReason()).isEqualTo("FailedResourceClaimCreation");
              assertThat(e.getMessage())
                  .isEqualTo("PodResourceClaim gpu: create ResourceClaim web-gpu-: " + refusal);
              assertThat(e.getInvolvedObject().getName()).isEqualTo("web");
            });
    assertThat(allClaims()).isEmpty();
    // once the API server accepts it, the next attempt creates it
    scheduling.schedule(pod);
    assertThat(allClaims()).hasSize(1);
  }
}
