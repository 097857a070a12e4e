package io.kdra.claimcontroller.domain;

import static io.kdra.core.testing.AllocFixtures.taintRule;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.kdra.core.taint.DeviceTaintRule;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Which pods device taints evict, and when; cases after upstream's {@code
 * device_taint_eviction_test.go} (names in quotes are its).
 */
class TaintEvictionTest {

  static final String DRIVER = "gpu.example.com";
  static final Instant TAINTED = Instant.parse("2026-12-06T07:00:00Z");
  static final Instant NOW = TAINTED.plusSeconds(5);

  static DeviceTaint taint(String effect) {
    return new DeviceTaint(effect, "maint", TAINTED.toString(), "yes");
  }

  static ResourceSlice slice(long generation, DeviceTaint... taintsOfGpu0) {
    return new ResourceSliceBuilder()
        .withNewMetadata()
        .withName("s-" + generation)
        .endMetadata()
        .withNewSpec()
        .withDriver(DRIVER)
        .withNodeName("node-a")
        .withNewPool()
        .withName("node-a")
        .withGeneration(generation)
        .withResourceSliceCount(1L)
        .endPool()
        .addNewDevice()
        .withName("gpu-0")
        .withTaints(taintsOfGpu0)
        .endDevice()
        .addNewDevice()
        .withName("gpu-1")
        .endDevice()
        .endSpec()
        .build();
  }

  static DeviceToleration noExecute(Long seconds) {
    return new DeviceToleration("NoExecute", "maint", "Exists", seconds, null);
  }

  /** Claim {@code c} holding {@code gpu-0} with these tolerations, reserved for pod {@code p}. */
  static ResourceClaim claim(DeviceToleration... tolerations) {
    return new ResourceClaimBuilder()
        .withNewMetadata()
        .withNamespace(K.NS)
        .withName("c")
        .withUid("uid-c")
        .endMetadata()
        .withNewStatus()
        .withNewAllocation()
        .withNewDevices()
        .addNewResult()
        .withRequest("r")
        .withDriver(DRIVER)
        .withPool("node-a")
        .withDevice("gpu-0")
        .withTolerations(tolerations)
        .endResult()
        .endDevices()
        .endAllocation()
        .addNewReservedFor()
        .withResource("pods")
        .withName("p")
        .withUid("uid-p")
        .endReservedFor()
        .endStatus()
        .build();
  }

  static Pod pod(boolean bound) {
    var b = K.pod("p").editSpec().addNewResourceClaim().withName("gpu").withResourceClaimName("c");
    var pod = b.endResourceClaim().endSpec().build();
    if (bound) {
      pod.getSpec().setNodeName("node-a");
    }
    return pod;
  }

  static DeviceTaintRule rule(String effect) {
    DeviceTaintRule r = taintRule("drain", DRIVER, "node-a", "gpu-0", "maint", "yes", effect);
    r.getSpec().getTaint().setTimeAdded(TAINTED.toString());
    return r;
  }

  static TaintEvictionPlan plan(
      Pod pod, ResourceClaim claim, List<ResourceSlice> slices, List<DeviceTaintRule> rules) {
    return TaintEvictionPlan.of(
        List.of(pod),
        (ns, name) -> name.equals("c") ? Optional.of(claim) : Optional.empty(),
        List.of(claim),
        slices,
        rules,
        Map.of(),
        NOW);
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        arguments("\"no-evict-no-taint\"", pod(true), claim(), List.of(slice(1)), List.of(), null),
        arguments(
            "\"evict-pod-resourceclaim\": a slice's NoExecute taint evicts at once",
            pod(true),
            claim(),
            List.of(slice(1, taint("NoExecute"))),
            List.of(),
            TAINTED),
        arguments(
            "\"evict-pod-rule\": a rule's NoExecute taint evicts at once",
            pod(true),
            claim(),
            List.of(slice(1)),
            List.of(rule("NoExecute")),
            TAINTED),
        arguments(
            "\"ignore-none-effect\"",
            pod(true),
            claim(),
            List.of(slice(1, taint("None"))),
            List.of(rule("None")),
            null),
        arguments(
            "NoSchedule evicts nothing",
            pod(true),
            claim(),
            List.of(slice(1, taint("NoSchedule"))),
            List.of(rule("NoSchedule")),
            null),
        arguments(
            "\"ignore-unknown-effect\"",
            pod(true),
            claim(),
            List.of(slice(1, taint("Whatever"))),
            List.of(),
            null),
        arguments(
            "\"evict-pod-later\": tolerationSeconds delay the eviction",
            pod(true),
            claim(noExecute(60L)),
            List.of(slice(1)),
            List.of(rule("NoExecute")),
            TAINTED.plusSeconds(60)),
        arguments(
            "\"evict-pod-later-many\": the smallest tolerationSeconds counts",
            pod(true),
            claim(noExecute(60L), noExecute(30L)),
            List.of(slice(1)),
            List.of(rule("NoExecute")),
            TAINTED.plusSeconds(30)),
        arguments(
            "negative tolerationSeconds count as 0",
            pod(true),
            claim(noExecute(-5L)),
            List.of(slice(1)),
            List.of(rule("NoExecute")),
            TAINTED),
        arguments(
            "\"no-evict-pod-toleration-forever-many\": a toleration without seconds wins",
            pod(true),
            claim(noExecute(60L), noExecute(null)),
            List.of(slice(1)),
            List.of(rule("NoExecute")),
            null),
        arguments(
            "\"evict-pod-toleration-mismatch\": a NoSchedule toleration does not help",
            pod(true),
            claim(new DeviceToleration("NoSchedule", "maint", "Exists", null, null)),
            List.of(slice(1)),
            List.of(rule("NoExecute")),
            TAINTED),
        arguments(
            "\"no-evict-pod-not-scheduled\"",
            pod(false),
            claim(),
            List.of(slice(1, taint("NoExecute"))),
            List.of(rule("NoExecute")),
            null),
        arguments(
            "\"no-evict-other-device\"",
            pod(true),
            claim(),
            List.of(slice(1)),
            List.of(taintRule("other", DRIVER, "node-a", "gpu-1", "m", null, "NoExecute")),
            null),
        arguments(
            "\"cancel-eviction-remove-taint-in-new-slice\": an older pool generation is ignored",
            pod(true),
            claim(),
            List.of(slice(1, taint("NoExecute")), slice(2)),
            List.of(),
            null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void evictionTime(
      String name,
      Pod pod,
      ResourceClaim claim,
      List<ResourceSlice> slices,
      List<DeviceTaintRule> rules,
      Instant expected) {
    TaintEvictionPlan plan = plan(pod, claim, slices, rules);
    if (expected == null) {
      assertThat(plan.due()).isEmpty();
      assertThat(plan.next()).isEmpty();
    } else if (expected.isAfter(NOW)) {
      assertThat(plan.due()).isEmpty();
      assertThat(plan.next()).contains(expected);
    } else {
      assertThat(plan.due()).singleElement().satisfies(e -> assertThat(e.uid()).isEqualTo("uid-p"));
      assertThat(plan.due().get(0).why().when()).isEqualTo(expected);
    }
  }

  @Test
  void noEvictWrongPod() {
    // "no-evict-wrong-pod": the claim is reserved for another pod of that name
    Pod replaced = pod(true);
    replaced.getMetadata().setUid("uid-other");
    assertThat(plan(replaced, claim(), List.of(slice(1)), List.of(rule("NoExecute"))).due())
        .isEmpty();
  }

  @Test
  void aPodOfATemplateIsEvictedThroughItsStatus() {
    // "evict-pod-resourceclaimtemplate"
    Pod pod = K.podWithTemplate("p", "gpu", "t");
    pod.getSpec().setNodeName("node-a");
    pod.setStatus(
        new io.fabric8.kubernetes.api.model.PodStatusBuilder()
            .addNewResourceClaimStatus()
            .withName("gpu")
            .withResourceClaimName("c")
            .endResourceClaimStatus()
            .build());
    assertThat(plan(pod, claim(), List.of(slice(1)), List.of(rule("NoExecute"))).due())
        .singleElement()
        .satisfies(
            e -> assertThat(e.why().causes().get(0).describe()).isEqualTo("DeviceTaintRule drain"));
  }

  @Test
  void ruleCountsPendingPodsAndSimulatesNone() {
    TaintEvictionPlan noExecute =
        plan(pod(true), claim(noExecute(60L)), List.of(slice(1)), List.of(rule("NoExecute")));
    assertThat(noExecute.counts().get("drain"))
        .isEqualTo(new TaintRuleStatus.Counts(1, 1, 0, 0, 0));

    // "none-pod-rule": what NoExecute would do, and the devices selected
    TaintEvictionPlan none = plan(pod(true), claim(), List.of(slice(1)), List.of(rule("None")));
    assertThat(none.due()).isEmpty();
    assertThat(none.counts().get("drain")).isEqualTo(new TaintRuleStatus.Counts(1, 1, 0, 1, 1));
  }
}
