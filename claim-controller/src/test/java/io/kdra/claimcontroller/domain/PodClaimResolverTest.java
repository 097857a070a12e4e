package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.kdra.claimcontroller.domain.PodClaimResolver.Step;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PodClaimResolverTest {

  record World(List<ResourceClaim> claims, List<ResourceClaimTemplate> templates)
      implements ClaimLookup {
    @Override
    public Optional<ResourceClaim> claim(String namespace, String name) {
      return claims.stream().filter(c -> c.getMetadata().getName().equals(name)).findFirst();
    }

    @Override
    public List<ResourceClaim> ownedBy(String namespace, String podUid) {
      return claims.stream()
          .filter(
              c -> TemplateClaims.owningPod(c).map(o -> o.getUid().equals(podUid)).orElse(false))
          .toList();
    }

    @Override
    public Optional<ResourceClaimTemplate> template(String namespace, String name) {
      return templates.stream().filter(t -> t.getMetadata().getName().equals(name)).findFirst();
    }
  }

  static final Pod POD = K.podWithTemplate("web", "gpu", "tpl");

  static Pod withStatus(Pod pod, String entry, String claim) {
    return new PodBuilder(pod)
        .editOrNewStatus()
        .addNewResourceClaimStatus()
        .withName(entry)
        .withResourceClaimName(claim)
        .endResourceClaimStatus()
        .endStatus()
        .build();
  }

  static Stream<Arguments> cases() {
    ResourceClaim mine = K.generated("web-gpu-abcde", POD, "gpu");
    ResourceClaim foreign =
        K.generated("web-gpu-zzzzz", K.podWithTemplate("other", "gpu", "tpl"), "gpu");
    ResourceClaim otherEntry = K.generated("web-nic-abcde", POD, "nic");
    Pod direct =
        K.pod("web")
            .editSpec()
            .addNewResourceClaim()
            .withName("shared")
            .withResourceClaimName("shared-gpu")
            .endResourceClaim()
            .endSpec()
            .build();
    return Stream.of(
        Arguments.of(
            Named.of("own: template exists, nothing yet -> create", POD),
            TemplateMode.OWN,
            new World(List.of(), List.of(K.template("tpl"))),
            Step.Create.class),
        Arguments.of(
            Named.of("own: template missing -> event", POD),
            TemplateMode.OWN,
            new World(List.of(), List.of()),
            Step.MissingTemplate.class),
        Arguments.of(
            Named.of("adopt: nothing yet -> wait for kube-controller-manager", POD),
            TemplateMode.ADOPT,
            new World(List.of(), List.of(K.template("tpl"))),
            Step.Wait.class),
        Arguments.of(
            Named.of("restart after create, before status -> record, no create", POD),
            TemplateMode.OWN,
            new World(List.of(mine), List.of(K.template("tpl"))),
            Step.Record.class),
        Arguments.of(
            Named.of(
                "adopt: claim by kube-controller-manager, not yet in the pod's status -> wait"
                    + " (the kubelet finds the claim only through the status)",
                POD),
            TemplateMode.ADOPT,
            new World(List.of(mine), List.of()),
            Step.Wait.class),
        Arguments.of(
            Named.of(
                "adopt: claim by kube-controller-manager, recorded in the pod's status -> use",
                withStatus(POD, "gpu", "web-gpu-abcde")),
            TemplateMode.ADOPT,
            new World(List.of(mine), List.of()),
            Step.Use.class),
        Arguments.of(
            Named.of("claim of another pod or entry is not ours -> create", POD),
            TemplateMode.OWN,
            new World(List.of(foreign, otherEntry), List.of(K.template("tpl"))),
            Step.Create.class),
        Arguments.of(
            Named.of(
                "recorded in status and owned -> use", withStatus(POD, "gpu", "web-gpu-abcde")),
            TemplateMode.OWN,
            new World(List.of(mine), List.of()),
            Step.Use.class),
        Arguments.of(
            Named.of("recorded with no claim name -> not needed", withStatus(POD, "gpu", null)),
            TemplateMode.OWN,
            new World(List.of(), List.of()),
            Step.NotNeeded.class),
        Arguments.of(
            Named.of(
                "recorded claim deleted -> create again", withStatus(POD, "gpu", "web-gpu-abcde")),
            TemplateMode.OWN,
            new World(List.of(), List.of(K.template("tpl"))),
            Step.Create.class),
        Arguments.of(
            Named.of(
                "recorded claim not owned by the pod -> create again",
                withStatus(POD, "gpu", "web-gpu-zzzzz")),
            TemplateMode.OWN,
            new World(List.of(foreign), List.of(K.template("tpl"))),
            Step.Create.class),
        Arguments.of(
            Named.of("direct claim exists -> use", direct),
            TemplateMode.OWN,
            new World(List.of(K.claim("shared-gpu").build()), List.of()),
            Step.Use.class),
        Arguments.of(
            Named.of("direct claim missing -> missing", direct),
            TemplateMode.OWN,
            new World(List.of(), List.of()),
            Step.MissingClaim.class));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void resolvesEachEntry(Pod pod, TemplateMode mode, World world, Class<? extends Step> want) {
    PodClaimResolver.Resolution r = PodClaimResolver.resolve(pod, world, mode);
    assertThat(r.steps()).hasSize(1);
    assertThat(r.steps().get(0)).isInstanceOf(want);
    boolean usable =
        want == Step.Use.class || want == Step.Record.class || want == Step.NotNeeded.class;
    assertThat(r.complete()).isEqualTo(usable);
  }

  @Test
  void createdClaimFollowsUpstreamConventions() {
    Step.Create c =
        (Step.Create)
            PodClaimResolver.resolve(
                    POD, new World(List.of(), List.of(K.template("tpl"))), TemplateMode.OWN)
                .steps()
                .get(0);
    ResourceClaim claim = c.desired();
    assertThat(claim.getMetadata().getNamespace()).isEqualTo(NS);
    assertThat(claim.getMetadata().getName()).isNull();
    assertThat(claim.getMetadata().getGenerateName()).isEqualTo("web-gpu-");
    assertThat(claim.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getApiVersion()).isEqualTo("v1");
              assertThat(o.getKind()).isEqualTo("Pod");
              assertThat(o.getName()).isEqualTo("web");
              assertThat(o.getUid()).isEqualTo("uid-web");
              assertThat(o.getController()).isTrue();
              // as kube-controller-manager's: a foreground deletion of the pod does not wait for it
              assertThat(o.getBlockOwnerDeletion()).isNull();
            });
    assertThat(claim.getMetadata().getLabels()).containsEntry("team", "ml");
    assertThat(claim.getMetadata().getAnnotations())
        .containsEntry("note", "copied")
        .containsEntry(Upstream.POD_CLAIM_NAME_ANNOTATION, "gpu");
    assertThat(claim.getSpec()).isEqualTo(K.template("tpl").getSpec().getSpec());
  }
}
