package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.kdra.claimcontroller.domain.PodClaimResolver.Step;
import io.kdra.claimcontroller.domain.PodClaimResolverTest.World;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A PodGroup's own claims (1.37's DRAWorkloadResourceClaims) as upstream's resourceclaim library
 * and controller decide them: which pod entries use the group's claim (BindTo), what is created for
 * the group (handlePodGroupClaim) and how a member's entry resolves to it.
 */
class PodGroupClaimsTest {

  static final PodGroupClaims GROUP =
      new PodGroupClaims(
          "train",
          "uid-pg-train",
          List.of(
              new PodGroupClaims.Entry("gpu", null, "tpl"),
              new PodGroupClaims.Entry("shared", "fixed-claim", null)),
          Map.of());

  static Pod member(String name, String group, PodResourceClaim... entries) {
    Pod p = K.pod(name).editSpec().addToResourceClaims(entries).endSpec().build();
    if (group != null) {
      p.getSpec().setAdditionalProperty("schedulingGroup", Map.of("podGroupName", group));
    }
    return p;
  }

  static PodResourceClaim fromTemplate(String entry, String template) {
    return new PodResourceClaimBuilder()
        .withName(entry)
        .withResourceClaimTemplateName(template)
        .build();
  }

  static PodResourceClaim named(String entry, String claim) {
    return new PodResourceClaimBuilder().withName(entry).withResourceClaimName(claim).build();
  }

  static Stream<Arguments> bindings() {
    return Stream.of(
        Arguments.of("same name and template", "train", fromTemplate("gpu", "tpl"), true),
        Arguments.of("same name and claim", "train", named("shared", "fixed-claim"), true),
        Arguments.of("another template", "train", fromTemplate("gpu", "other"), false),
        Arguments.of("another entry name", "train", fromTemplate("gpu2", "tpl"), false),
        Arguments.of("a claim where the group has a template", "train", named("gpu", "tpl"), false),
        Arguments.of("a member of another group", "eval", fromTemplate("gpu", "tpl"), false),
        Arguments.of("a pod of no group", null, fromTemplate("gpu", "tpl"), false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bindings")
  void anEntryIsTheGroupsWhenEveryFieldMatches(
      String name, String group, PodResourceClaim entry, boolean bound) {
    Pod pod = member("w0", group, entry);

    assertThat(GROUP.boundEntry(pod, entry).isPresent()).isEqualTo(bound);
    assertThat(PodGroupClaims.consumerFor(pod, GROUP, entry))
        .isEqualTo(
            bound
                ? new ResourceClaimConsumerReferenceBuilder()
                    .withApiGroup("scheduling.k8s.io")
                    .withResource("podgroups")
                    .withName("train")
                    .withUid("uid-pg-train")
                    .build()
                : PodGroupClaims.podConsumer(pod));
  }

  static ResourceClaim groupClaim(String name, String groupUid, String entry) {
    return K.claim(name)
        .editMetadata()
        .addToOwnerReferences(
            new PodGroupClaims("train", groupUid, List.of(), Map.of()).controllerRef())
        .addToAnnotations(Upstream.POD_CLAIM_NAME_ANNOTATION, entry)
        .endMetadata()
        .build();
  }

  static PodGroupClaims withStatus(String entry, String claim) {
    return new PodGroupClaims(
        GROUP.name(),
        GROUP.uid(),
        GROUP.entries(),
        java.util.Collections.singletonMap(entry, claim));
  }

  static Stream<Arguments> plans() {
    ResourceClaimTemplate tpl = K.template("tpl");
    ResourceClaim recorded = groupClaim("train-gpu-abcde", "uid-pg-train", "gpu");
    ResourceClaim ofOldGroup = groupClaim("train-gpu-old00", "uid-pg-old", "gpu");
    return Stream.of(
        Arguments.of(
            "nothing yet: created from the template",
            GROUP,
            new World(List.of(), List.of(tpl)),
            Step.Create.class),
        Arguments.of(
            "recorded and the group's: used",
            withStatus("gpu", "train-gpu-abcde"),
            new World(List.of(recorded), List.of(tpl)),
            Step.Use.class),
        Arguments.of(
            "created before the status was written: recorded, not created again",
            GROUP,
            new World(List.of(recorded), List.of(tpl)),
            Step.Record.class),
        Arguments.of(
            "recorded but deleted: created again",
            withStatus("gpu", "train-gpu-abcde"),
            new World(List.of(), List.of(tpl)),
            Step.Create.class),
        Arguments.of(
            "recorded but of an earlier group of that name: created again",
            withStatus("gpu", "train-gpu-old00"),
            new World(List.of(ofOldGroup), List.of(tpl)),
            Step.Create.class),
        Arguments.of(
            "recorded as not needed",
            withStatus("gpu", null),
            new World(List.of(), List.of(tpl)),
            Step.NotNeeded.class),
        Arguments.of(
            "no template", GROUP, new World(List.of(), List.of()), Step.MissingTemplate.class));
  }

  /** World's ownedBy finds pod owners only; this one finds PodGroup owners as the index does. */
  static ClaimLookup groupAware(World w) {
    return new ClaimLookup() {
      @Override
      public java.util.Optional<ResourceClaim> claim(String namespace, String name) {
        return w.claim(namespace, name);
      }

      @Override
      public List<ResourceClaim> ownedBy(String namespace, String uid) {
        return w.claims().stream()
            .filter(c -> TemplateClaims.owningPodOrGroupUid(c).map(uid::equals).orElse(false))
            .toList();
      }

      @Override
      public java.util.Optional<ResourceClaimTemplate> template(String namespace, String name) {
        return w.template(namespace, name);
      }
    };
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("plans")
  void eachTemplateEntryOfTheGroupGetsOneClaim(
      String name, PodGroupClaims group, World world, Class<? extends Step> expected) {
    List<Step> plan = group.plan(NS, groupAware(world));

    assertThat(plan).hasSize(1); // the entry naming a claim needs nothing
    assertThat(plan.get(0)).isInstanceOf(expected);
  }

  @Test
  void theCreatedClaimIsNamedForTheGroupAndEntryAndOwnedByTheGroup() {
    ResourceClaim c = GROUP.desired(NS, "gpu", K.template("tpl"));

    assertThat(c.getMetadata().getGenerateName()).isEqualTo("train-gpu-");
    assertThat(c.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getApiVersion()).isEqualTo("scheduling.k8s.io/v1beta1");
              assertThat(o.getKind()).isEqualTo("PodGroup");
              assertThat(o.getName()).isEqualTo("train");
              assertThat(o.getUid()).isEqualTo("uid-pg-train");
              assertThat(o.getController()).isTrue();
              assertThat(o.getBlockOwnerDeletion()).isNull();
            });
    assertThat(c.getMetadata().getAnnotations())
        .containsEntry(Upstream.POD_CLAIM_NAME_ANNOTATION, "gpu")
        .containsEntry("note", "copied");
    assertThat(c.getMetadata().getLabels()).containsEntry("team", "ml");
    assertThat(c.getSpec()).isEqualTo(K.template("tpl").getSpec().getSpec());
  }

  @Test
  void theStatusAppliedHoldsEveryRecordedEntryNotOnlyTheNewOnes() {
    PodGroupClaims g =
        new PodGroupClaims(
            "train",
            "uid-pg-train",
            GROUP.entries(),
            Map.of("a", "train-a-11111", "gpu", "train-gpu-old00"));

    assertThat(g.statusesWith(Map.of("gpu", "train-gpu-abcde")))
        .containsExactly(Map.entry("a", "train-a-11111"), Map.entry("gpu", "train-gpu-abcde"));
  }

  static Stream<Arguments> memberEntries() {
    ResourceClaim groups = groupClaim("train-gpu-abcde", "uid-pg-train", "gpu");
    Pod pod = member("w0", "train", fromTemplate("gpu", "tpl"));
    Pod recorded =
        new PodBuilder(pod)
            .editOrNewStatus()
            .addNewResourceClaimStatus()
            .withName("gpu")
            .withResourceClaimName("train-gpu-abcde")
            .endResourceClaimStatus()
            .endStatus()
            .build();
    return Stream.of(
        Arguments.of(
            "the group's claim exists: recorded in the pod's status",
            pod,
            List.of(groups),
            TemplateMode.OWN,
            Step.Record.class),
        Arguments.of(
            "adopt mode: waits until kube-controller-manager records it in the pod's status",
            pod,
            List.of(groups),
            TemplateMode.ADOPT,
            Step.Wait.class),
        Arguments.of(
            "adopt mode, recorded: used",
            recorded,
            List.of(groups),
            TemplateMode.ADOPT,
            Step.Use.class),
        Arguments.of(
            "already recorded: used", recorded, List.of(groups), TemplateMode.OWN, Step.Use.class),
        Arguments.of(
            "the group's claim is not made yet: the member waits and creates none of its own",
            pod,
            List.of(),
            TemplateMode.OWN,
            Step.Wait.class));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("memberEntries")
  void aMembersBoundEntryUsesTheGroupsClaim(
      String name,
      Pod pod,
      List<ResourceClaim> claims,
      TemplateMode mode,
      Class<? extends Step> expected) {
    PodClaimResolver.Resolution r =
        PodClaimResolver.resolve(
            pod, groupAware(new World(claims, List.of(K.template("tpl")))), mode, GROUP);

    assertThat(r.steps()).singleElement().isInstanceOf(expected);
    if (!claims.isEmpty() && expected != Step.Wait.class) {
      assertThat(r.claims()).containsEntry("gpu", claims.get(0));
    }
  }

  @Test
  void aBoundMemberWithTheGroupsClaimRecordedUsesItWithoutTheGroup() {
    ResourceClaim groups = groupClaim("train-gpu-abcde", "uid-pg-train", "gpu");
    Pod recorded =
        new PodBuilder(member("w0", "train", fromTemplate("gpu", "tpl")))
            .editOrNewStatus()
            .addNewResourceClaimStatus()
            .withName("gpu")
            .withResourceClaimName("train-gpu-abcde")
            .endResourceClaimStatus()
            .endStatus()
            .build();

    PodClaimResolver.Resolution r =
        PodClaimResolver.resolve(
            recorded, new World(List.of(groups), List.of(K.template("tpl"))), TemplateMode.OWN);

    assertThat(r.steps()).singleElement().isInstanceOf(Step.Use.class);
  }

  @Test
  void aClaimReservedForTheGroupCountsAsReservedForEachMember() {
    ResourceClaim c =
        K.claim("train-gpu-abcde")
            .withNewStatus()
            .addToReservedFor(GROUP.consumer())
            .endStatus()
            .build();

    assertThat(PodGroupClaims.reservesPodOrGroup(c, member("w0", "train"))).isTrue();
    assertThat(PodGroupClaims.reservesPodOrGroup(c, member("w0", "eval"))).isFalse();
    assertThat(PodGroupClaims.reservesPodOrGroup(c, member("w0", null))).isFalse();
  }

  @Test
  void parsesSpecAndStatusAsTheApiServerWritesThem() {
    PodGroupClaims parsed =
        PodGroupClaims.parse(
            "train",
            "uid-pg-train",
            Map.of(
                "resourceClaims",
                List.of(
                    Map.of("name", "gpu", "resourceClaimTemplateName", "tpl"),
                    Map.of("name", "shared", "resourceClaimName", "fixed-claim"))),
            Map.of(
                "resourceClaimStatuses",
                List.of(Map.of("name", "gpu", "resourceClaimName", "train-gpu-abcde"))));

    assertThat(parsed.entries()).isEqualTo(GROUP.entries());
    assertThat(parsed.statuses()).containsExactly(Map.entry("gpu", "train-gpu-abcde"));
  }
}
