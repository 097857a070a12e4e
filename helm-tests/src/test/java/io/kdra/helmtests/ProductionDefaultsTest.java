package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.WeightedPodAffinityTerm;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Defaults a production cluster accepts: the Deployments' replicas spread over nodes, the driver at
 * node-critical priority (with the quota that admits it outside kube-system), the controllers' pods
 * within Pod Security's restricted profile.
 */
class ProductionDefaultsTest {

  static final String HOSTNAME = "kubernetes.io/hostname";

  static List<HasMetadata> allComponents(Map<String, Object> more) {
    return Chart.render(
        Chart.merge(Chart.values("computeClassBridge.enabled", true, "cluster.gke", true), more));
  }

  static PodSpec pod(List<HasMetadata> objects, String component) {
    return Rendered.one(objects, Deployment.class, "kdra-" + component)
        .getSpec()
        .getTemplate()
        .getSpec();
  }

  @Test
  void theReplicasOfEachDeploymentPreferDifferentNodes() {
    List<HasMetadata> objects = allComponents(Map.of());
    for (String c : RenderTest.DEPLOYMENTS) {
      Deployment d = Rendered.one(objects, Deployment.class, "kdra-" + c);
      Map<String, String> selector = d.getSpec().getSelector().getMatchLabels();
      PodSpec pod = d.getSpec().getTemplate().getSpec();
      assertThat(
              pod.getAffinity()
                  .getPodAntiAffinity()
                  .getRequiredDuringSchedulingIgnoredDuringExecution())
          .as(c)
          .isNullOrEmpty();
      assertThat(
              pod.getAffinity()
                  .getPodAntiAffinity()
                  .getPreferredDuringSchedulingIgnoredDuringExecution())
          .as(c)
          .singleElement()
          .satisfies(
              (WeightedPodAffinityTerm t) -> {
                assertThat(t.getWeight()).isEqualTo(100);
                assertThat(t.getPodAffinityTerm().getTopologyKey()).isEqualTo(HOSTNAME);
                assertThat(t.getPodAffinityTerm().getLabelSelector().getMatchLabels())
                    .isEqualTo(selector);
              });
      assertThat(pod.getTopologySpreadConstraints())
          .as(c)
          .singleElement()
          .satisfies(
              (TopologySpreadConstraint t) -> {
                assertThat(t.getTopologyKey()).isEqualTo(HOSTNAME);
                assertThat(t.getMaxSkew()).isEqualTo(1);
                // a preference: never leaves a replica pending on a one-node cluster
                assertThat(t.getWhenUnsatisfiable()).isEqualTo("ScheduleAnyway");
                assertThat(t.getLabelSelector().getMatchLabels()).isEqualTo(selector);
                assertThat(t.getMatchLabelKeys()).containsExactly("pod-template-hash");
              });
    }
  }

  @Test
  void theSpreadYieldsToValuesThatSetItAndCanBeTurnedOff() {
    Map<String, Object> zone =
        Map.of(
            "maxSkew",
            1,
            "topologyKey",
            "topology.kubernetes.io/zone",
            "whenUnsatisfiable",
            "DoNotSchedule",
            "labelSelector",
            Map.of("matchLabels", Map.of("app.kubernetes.io/component", "claim-controller")));
    Map<String, Object> nodeAffinity =
        Map.of(
            "nodeAffinity",
            Map.of(
                "requiredDuringSchedulingIgnoredDuringExecution",
                Map.of(
                    "nodeSelectorTerms",
                    List.of(
                        Map.of(
                            "matchExpressions",
                            List.of(
                                Map.of(
                                    "key",
                                    "node-role.kubernetes.io/infra",
                                    "operator",
                                    "Exists")))))));
    List<HasMetadata> objects =
        allComponents(
            Chart.values(
                "claimController.topologySpreadConstraints",
                List.of(zone),
                "computeClassBridge.affinity",
                nodeAffinity,
                "slicePublisher.spreadAcrossNodes",
                false));
    // given constraints replace the default ones; the anti-affinity stays
    PodSpec controller = pod(objects, "claim-controller");
    assertThat(controller.getTopologySpreadConstraints())
        .singleElement()
        .satisfies(t -> assertThat(t.getTopologyKey()).isEqualTo("topology.kubernetes.io/zone"));
    assertThat(controller.getAffinity().getPodAntiAffinity()).isNotNull();
    // a given affinity without podAntiAffinity gets the default one beside it
    PodSpec bridge = pod(objects, "computeclass-bridge");
    assertThat(bridge.getAffinity().getNodeAffinity()).isNotNull();
    assertThat(bridge.getAffinity().getPodAntiAffinity()).isNotNull();
    // off: neither
    PodSpec publisher = pod(objects, "slice-publisher");
    assertThat(publisher.getAffinity()).isNull();
    assertThat(publisher.getTopologySpreadConstraints()).isNullOrEmpty();
    // a given podAntiAffinity is used as given (full-values.yaml's publisher)
    PodSpec full =
        Rendered.one(
                Chart.render(Chart.fullValues()), Deployment.class, "kdra-full-slice-publisher")
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(
            full.getAffinity()
                .getPodAntiAffinity()
                .getPreferredDuringSchedulingIgnoredDuringExecution())
        .singleElement()
        .satisfies(
            t ->
                assertThat(t.getPodAffinityTerm().getLabelSelector().getMatchLabels())
                    .containsOnlyKeys("app.kubernetes.io/component"));
  }

  @Test
  void theDriverRunsAtNodeCriticalPriorityWithTheQuotaThatAdmitsItHere() {
    List<HasMetadata> objects = Chart.render(Map.of());
    assertThat(
            Rendered.one(objects, DaemonSet.class, "kdra-device-driver")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getPriorityClassName())
        .isEqualTo("system-node-critical");
    ResourceQuota quota =
        Rendered.one(objects, ResourceQuota.class, "kdra-device-driver-critical-pods");
    assertThat(quota.getMetadata().getNamespace()).isEqualTo(Chart.NAMESPACE);
    assertThat(quota.getSpec().getScopeSelector().getMatchExpressions())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getScopeName()).isEqualTo("PriorityClass");
              assertThat(e.getOperator()).isEqualTo("In");
              assertThat(e.getValues()).containsExactly("system-node-critical");
            });
    // a quota counts too: it must never be what keeps a driver pod from a node
    assertThat(quota.getSpec().getHard()).containsOnlyKeys("pods");
    assertThat(Quantity.getAmountInBytes(quota.getSpec().getHard().get("pods")).longValue())
        .isGreaterThanOrEqualTo(1_000_000L);
    // the controllers keep the default priority
    for (String c : List.of("slice-publisher", "claim-controller")) {
      assertThat(pod(objects, c).getPriorityClassName()).isNull();
    }
  }

  @Test
  void noQuotaInKubeSystemWithoutCriticalPriorityOrWhenTurnedOff() {
    assertThat(Chart.render(Map.of(), "kube-system")).noneMatch(o -> o instanceof ResourceQuota);
    assertThat(Chart.render(Chart.values("deviceDriver.priorityClassName", "")))
        .noneMatch(o -> o instanceof ResourceQuota);
    assertThat(Chart.render(Chart.values("deviceDriver.criticalPodsQuota.enabled", false)))
        .noneMatch(o -> o instanceof ResourceQuota);
    assertThat(
            Chart.render(
                Chart.values("deviceDriver.enabled", false, "slicePublisher.enabled", true)))
        .noneMatch(o -> o instanceof ResourceQuota);
  }

  /** Pod Security: a namespace labelled enforce=restricted admits the controllers' pods. */
  @Test
  void theControllersPodsPassTheRestrictedProfile() {
    List<HasMetadata> objects = allComponents(Map.of());
    for (String c : RenderTest.DEPLOYMENTS) {
      assertThat(RestrictedProfile.violations(pod(objects, c))).as(c).isEmpty();
    }
  }

  /** The driver needs privileged: its host paths and root break restricted (and baseline). */
  @Test
  void theDriversPodDoesNot() {
    PodSpec driver =
        Rendered.one(Chart.render(Map.of()), DaemonSet.class, "kdra-device-driver")
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(RestrictedProfile.violations(driver))
        .contains("volume plugins-registry of type hostPath", "pod runAsUser 0");
  }
}
