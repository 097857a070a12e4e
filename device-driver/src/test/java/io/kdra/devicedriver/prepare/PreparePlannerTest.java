package io.kdra.devicedriver.prepare;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static io.kdra.devicedriver.testing.ClaimFixture.gpuConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PreparedDevice;
import io.kdra.devicedriver.testing.ClaimFixture;
import io.kdra.devicedriver.testing.Inventories;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class PreparePlannerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final PreparePlanner planner = new PreparePlanner(ClaimFixture.DRIVER, ClaimFixture.NODE);

  record Bad(ClaimFixture claim, ClaimRef ref, String field, String message) {}

  static Stream<Named<Bad>> badClaims() {
    ClaimFixture ok = claim("c").result("gpu", "gpu-0");
    return Stream.of(
        Named.of(
            "uid differs from the kubelet's",
            new Bad(
                ok,
                new ClaimRef("default", "other-uid", "c"),
                "metadata.uid",
                "but the kubelet asked for \"other-uid\"")),
        Named.of(
            "not allocated",
            new Bad(claim("c").unallocated(), null, "status.allocation", "not allocated")),
        Named.of(
            "no result of this driver",
            new Bad(
                claim("c").result("gpu", "other.example.com", "node-a", "x"),
                null,
                "status.allocation.devices.results",
                "no device is allocated from driver")),
        Named.of(
            "result in another node's pool",
            new Bad(
                claim("c")
                    .result("gpu", "gpu-0")
                    .result("gpu", ClaimFixture.DRIVER, "node-b", "gpu-1"),
                null,
                "status.allocation.devices.results[1].pool",
                "\"node-b\" is not this node's pool \"node-a\"")),
        Named.of(
            "device not on this node",
            new Bad(
                claim("c").result("gpu", "gpu-9"),
                null,
                "status.allocation.devices.results[0].device",
                "\"gpu-9\" is not a device of node \"node-a\"")),
        Named.of(
            "config with unknown source",
            new Bad(
                claim("c")
                    .result("gpu", "gpu-0")
                    .config("FromSomewhere", List.of(), gpuConfig(null)),
                null,
                "status.allocation.devices.config[0].source",
                "not one of FromClass, FromClaim")),
        Named.of(
            "config with unknown kind",
            new Bad(
                claim("c")
                    .result("gpu", "gpu-0")
                    .config(
                        "FromClaim",
                        List.of(),
                        Map.of("apiVersion", "resource.kdra.io/v1alpha1", "kind", "TpuConfig")),
                null,
                "status.allocation.devices.config[0].opaque.parameters.kind",
                "\"TpuConfig\" is not supported")),
        Named.of(
            "config with unknown field",
            new Bad(
                claim("c")
                    .result("gpu", "gpu-0")
                    .config(
                        "FromClass",
                        List.of(),
                        gpuConfig(Map.of("strategy", "MPS", "mps", Map.of("threads", 5)))),
                null,
                "status.allocation.devices.config[0].opaque.parameters.sharing.mps.threads",
                "unknown field")),
        Named.of(
            "conflicting MPS settings in one claim",
            new Bad(
                claim("c")
                    .result("a", "gpu-0")
                    .result("b", "gpu-1")
                    .config(
                        "FromClaim",
                        List.of("a"),
                        gpuConfig(
                            Map.of("strategy", "MPS", "mps", Map.of("activeThreadPercentage", 50))))
                    .config(
                        "FromClaim",
                        List.of("b"),
                        gpuConfig(
                            Map.of(
                                "strategy", "MPS", "mps", Map.of("activeThreadPercentage", 20)))),
                null,
                "status.allocation.devices.config[1]",
                "MPS settings differ")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badClaims")
  void refusesBadClaimsNamingTheField(Bad bad) {
    ClaimRef ref = bad.ref() == null ? bad.claim().ref() : bad.ref();
    assertThatThrownBy(() -> planner.plan(ref, bad.claim().build(), Inventories.gpus(2)))
        .isInstanceOfSatisfying(
            PrepareException.class,
            e -> {
              assertThat(e.field()).isEqualTo(bad.field());
              assertThat(e.getMessage()).startsWith(bad.field() + ": ").contains(bad.message());
            });
  }

  @Test
  void plansDevicesWithCdiIdsBaseRequestNamesAndOnlyThisDriversResults() throws Exception {
    ClaimFixture c =
        claim("c")
            .uid("7f3a")
            .result("gpu/large", "gpu-1")
            .result("nic", "net.example.com", "node-a", "eth0")
            .result("gpu/large", "gpu-0");
    PreparedClaim plan = planner.plan(c.ref(), c.build(), Inventories.gpus(2));

    assertThat(plan.devices())
        .containsExactly(
            new PreparedDevice(
                List.of("gpu"), "node-a", "gpu-1", List.of("k8s.gpu.kdra.io/claim=7f3a-gpu-1")),
            new PreparedDevice(
                List.of("gpu"), "node-a", "gpu-0", List.of("k8s.gpu.kdra.io/claim=7f3a-gpu-0")));
    assertThat(plan.cdiSpecFile()).isEqualTo("k8s.gpu.kdra.io-claim_7f3a.json");

    JsonNode spec = JSON.readTree(plan.cdiSpec());
    assertThat(spec.get("cdiVersion").asText()).isEqualTo("0.5.0");
    assertThat(spec.get("kind").asText()).isEqualTo("k8s.gpu.kdra.io/claim");
    assertThat(spec.at("/devices/0/name").asText()).isEqualTo("7f3a-gpu-1");
    assertThat(spec.at("/devices/0/containerEdits/deviceNodes/0/path").asText())
        .isEqualTo("/dev/nvidia1");
    assertThat(strings(spec.at("/devices/1/containerEdits/env")))
        .containsExactly("KDRA_DEVICE_1=gpu-0", "KDRA_DEVICE_1_SHARING_STRATEGY=Exclusive");
    assertThat(spec.at("/containerEdits/deviceNodes/0/path").asText()).isEqualTo("/dev/nvidiactl");
  }

  /**
   * An adminAccess result may name a device a regular claim holds (a MIG partition in use): the
   * planner sets nothing up for it, and says so in the spec, so that its unprepare releases nothing
   * either, even after a restart.
   */
  @Test
  void setsUpNothingForAnAdminAccessResult() throws Exception {
    List<String> setups = new ArrayList<>();
    DeviceSetup recording =
        new DeviceSetup() {
          @Override
          public DeviceEdits prepare(Allocated device) {
            setups.add(device.device().name());
            return new DeviceEdits(List.of("KDRA_MIG_DEVICE=MIG-x/1/0"), List.of(), List.of());
          }

          @Override
          public void release(io.kdra.devicedriver.discovery.NodeDevice device, boolean last) {}
        };
    ClaimFixture c =
        claim("c").uid("u").result("admin", "gpu-0").adminAccess().result("work", "gpu-1");

    PreparedClaim plan =
        new PreparePlanner(ClaimFixture.DRIVER, ClaimFixture.NODE, recording)
            .plan(c.ref(), c.build(), Inventories.gpus(2));

    assertThat(setups).containsExactly("gpu-1");
    JsonNode spec = JSON.readTree(plan.cdiSpec());
    assertThat(strings(spec.at("/devices/0/containerEdits/env")))
        .containsExactly(
            "KDRA_DEVICE_0=gpu-0",
            "KDRA_DEVICE_0_SHARING_STRATEGY=Exclusive",
            "KDRA_DEVICE_0_ADMIN_ACCESS=true");
    assertThat(plan.adminAccess("gpu-0")).isTrue();
    assertThat(plan.adminAccess("gpu-1")).isFalse();
    assertThat(plan.usesSetupOf("gpu-0")).isFalse();
    assertThat(plan.usesSetupOf("gpu-1")).isTrue();
    assertThat(plan.usesSetupOf("gpu-7")).isFalse();
  }

  @Test
  void isDeterministic() throws Exception {
    ClaimFixture c =
        claim("c")
            .result("gpu", "gpu-0")
            .result("gpu", "gpu-1")
            .config("FromClass", List.of(), gpuConfig(Map.of("strategy", "TimeSlicing")));
    PreparedClaim a = planner.plan(c.ref(), c.build(), Inventories.gpus(2));
    PreparedClaim b = planner.plan(c.ref(), c.build(), Inventories.gpus(2));
    assertThat(a).isEqualTo(b);
  }

  record Sharing(ClaimFixture claim, List<String> deviceEnv, List<String> commonEnv) {}

  static Stream<Named<Sharing>> sharing() {
    Map<String, Object> ts =
        gpuConfig(Map.of("strategy", "TimeSlicing", "timeSlicing", Map.of("interval", "Long")));
    Map<String, Object> mps =
        gpuConfig(
            Map.of(
                "strategy",
                "MPS",
                "mps",
                Map.of("activeThreadPercentage", 25, "pinnedMemoryLimit", "1Gi")));
    return Stream.of(
        Named.of(
            "no config: exclusive",
            new Sharing(
                claim("c").result("gpu", "gpu-0"),
                List.of("KDRA_DEVICE_0_SHARING_STRATEGY=Exclusive"),
                List.of())),
        Named.of(
            "class config applies to all requests",
            new Sharing(
                claim("c").result("gpu", "gpu-0").config("FromClass", List.of(), ts),
                List.of(
                    "KDRA_DEVICE_0_SHARING_STRATEGY=TimeSlicing",
                    "KDRA_DEVICE_0_TIMESLICE_INTERVAL=Long"),
                List.of())),
        Named.of(
            "claim config wins over class config",
            new Sharing(
                claim("c")
                    .result("gpu", "gpu-0")
                    .config("FromClaim", List.of("gpu"), mps)
                    .config("FromClass", List.of(), ts),
                List.of("KDRA_DEVICE_0_SHARING_STRATEGY=MPS"),
                List.of(
                    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25",
                    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=1024M"))),
        Named.of(
            "config for the parent request matches a subrequest",
            new Sharing(
                claim("c").result("gpu/small", "gpu-0").config("FromClaim", List.of("gpu"), ts),
                List.of("KDRA_DEVICE_0_SHARING_STRATEGY=TimeSlicing"),
                List.of())),
        Named.of(
            "config for another request does not apply",
            new Sharing(
                claim("c").result("gpu", "gpu-0").config("FromClaim", List.of("other"), ts),
                List.of("KDRA_DEVICE_0_SHARING_STRATEGY=Exclusive"),
                List.of())),
        Named.of(
            "another driver's config is ignored",
            new Sharing(
                claim("c")
                    .result("gpu", "gpu-0")
                    .config("FromClaim", List.of(), "other.example.com", Map.of("x", 1)),
                List.of("KDRA_DEVICE_0_SHARING_STRATEGY=Exclusive"),
                List.of())));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("sharing")
  void appliesSharingConfig(Sharing s) throws Exception {
    PreparedClaim plan = planner.plan(s.claim().ref(), s.claim().build(), Inventories.gpus(2));
    JsonNode spec = JSON.readTree(plan.cdiSpec());
    assertThat(strings(spec.at("/devices/0/containerEdits/env"))).containsAll(s.deviceEnv());
    assertThat(strings(spec.at("/containerEdits/env"))).containsExactlyElementsOf(s.commonEnv());
  }

  @Test
  void keepsTheTraceParentAnnotation() throws Exception {
    ClaimFixture c =
        claim("c")
            .result("gpu", "gpu-0")
            .annotation(PreparePlanner.TRACE_ANNOTATION, "00-abc-def-01");
    assertThat(planner.plan(c.ref(), c.build(), Inventories.gpus(1)).traceParent())
        .isEqualTo("00-abc-def-01");
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }
}
