package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatorCases.ANY_GPU;
import static io.kdra.core.testing.AllocFixtures.DRIVER;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.deviceClassWithConfig;
import static io.kdra.core.testing.AllocFixtures.firstAvailable;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static io.kdra.core.testing.AllocFixtures.sub;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.kdra.core.testing.Scenario;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The shape of allocation results: flags, tolerations, config and node selectors. */
class ResultShapeTest {

  static Arguments tc(
      String name,
      Scenario s,
      io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim claim,
      Consumer<AllocationResult> check) {
    return arguments(named(name, s), claim, check);
  }

  static DeviceRequestAllocationResult first(AllocationResult r) {
    return r.getDevices().getResults().get(0);
  }

  static Scenario local() {
    return Scenario.of(
            slice("s", "node-a", device("d0").build(), device("d1").build(), device("d2").build())
                .build())
        .withClasses(
            deviceClassWithConfig("gpu", DRIVER, "{\"kind\":\"C\"}", ANY_GPU),
            deviceClass("plain", ANY_GPU));
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        tc(
            "node-local device: matchFields metadata.name In [node]",
            local(),
            claim("c", request("r", "plain").build()).build(),
            r -> {
              var term = r.getNodeSelector().getNodeSelectorTerms().get(0);
              assertThat(term.getMatchFields())
                  .singleElement()
                  .satisfies(
                      f -> {
                        assertThat(f.getKey()).isEqualTo("metadata.name");
                        assertThat(f.getOperator()).isEqualTo("In");
                        assertThat(f.getValues()).containsExactly("node-a");
                      });
              assertThat(term.getMatchExpressions()).isNullOrEmpty();
            }),
        tc(
            "allNodes device: no node selector",
            Scenario.of(
                    slice("s", "x", device("d").build()).withPool("p", 0, 1).withAllNodes().build())
                .withClasses(deviceClass("plain", ANY_GPU)),
            claim("c", request("r", "plain").build()).build(),
            r -> assertThat(r.getNodeSelector()).isNull()),
        tc(
            "network-attached devices: selectors merged into one term",
            Scenario.of(
                    slice("s1", "x", device("d").build())
                        .withPool("p1", 0, 1)
                        .withNodeSelector("rack", "r1")
                        .build(),
                    slice("s2", "x", device("e").build())
                        .withPool("p2", 0, 1)
                        .withNodeSelector("zone", "z1")
                        .build())
                .withClasses(deviceClass("plain", ANY_GPU)),
            claim("c", request("r", "plain").withCount(2).build()).build(),
            r -> {
              assertThat(r.getNodeSelector().getNodeSelectorTerms()).hasSize(1);
              assertThat(r.getNodeSelector().getNodeSelectorTerms().get(0).getMatchExpressions())
                  .extracting(e -> e.getKey())
                  .containsExactly("rack", "zone");
            }),
        tc(
            "bindsToNode device gets the node's name selector",
            Scenario.of(
                    slice("s", "x", device("d").withBindsToNode().build())
                        .withPool("p", 0, 1)
                        .withAllNodes()
                        .build())
                .withClasses(deviceClass("plain", ANY_GPU)),
            claim("c", request("r", "plain").build()).build(),
            r ->
                assertThat(
                        r.getNodeSelector()
                            .getNodeSelectorTerms()
                            .get(0)
                            .getMatchFields()
                            .get(0)
                            .getValues())
                    .containsExactly("node-a")),
        tc(
            "adminAccess only written when true",
            local(),
            claim(
                    "c",
                    request("a", "plain").withAdminAccess().build(),
                    request("b", "plain").build())
                .build(),
            r -> {
              assertThat(r.getDevices().getResults().get(0).getAdminAccess()).isTrue();
              assertThat(r.getDevices().getResults().get(1).getAdminAccess()).isNull();
            }),
        tc(
            "tolerations copied into results",
            local(),
            claim(
                    "c",
                    request("r", "plain").withToleration("k", "Exists", null, "NoSchedule").build())
                .build(),
            r ->
                assertThat(first(r).getTolerations())
                    .singleElement()
                    .satisfies(t -> assertThat(t.getKey()).isEqualTo("k"))),
        tc(
            "config: FromClass naming the requests that used the class, then FromClaim",
            local(),
            claim(
                    "c",
                    request("a", "gpu").build(),
                    request("b", "gpu").build(),
                    request("p", "plain").build())
                .withConfig(DRIVER, "{\"kind\":\"Claim\"}", "b")
                .withConfig(DRIVER, "{\"kind\":\"Other\"}", "nosuch")
                .build(),
            r -> {
              List<DeviceAllocationConfiguration> cfg = r.getDevices().getConfig();
              assertThat(cfg)
                  .extracting(DeviceAllocationConfiguration::getSource)
                  .containsExactly("FromClass", "FromClaim");
              assertThat(cfg.get(0).getRequests()).containsExactly("a", "b");
              assertThat(cfg.get(1).getRequests()).containsExactly("b");
            }),
        tc(
            "config of a firstAvailable claim names req/sub",
            local(),
            claim("c", firstAvailable("r", sub("x", "gpu", 1)))
                .withConfig(DRIVER, "{}", "r/x")
                .build(),
            r -> {
              // r/x is the claim's only request: 1.37 leaves the names out ("all requests")
              assertThat(r.getDevices().getConfig().get(0).getRequests()).isNullOrEmpty();
              assertThat(r.getDevices().getConfig().get(1).getSource()).isEqualTo("FromClaim");
            }),
        tc(
            "config naming every request of the claim names none (1.37), others keep theirs",
            local(),
            claim("c", request("a", "gpu").build(), request("b", "plain").build())
                .withConfig(DRIVER, "{\"kind\":\"Both\"}", "a", "b")
                .withConfig(DRIVER, "{\"kind\":\"One\"}", "a")
                .build(),
            r -> {
              List<DeviceAllocationConfiguration> cfg = r.getDevices().getConfig();
              assertThat(cfg)
                  .extracting(DeviceAllocationConfiguration::getSource)
                  .containsExactly("FromClass", "FromClaim", "FromClaim");
              assertThat(cfg.get(0).getRequests()).containsExactly("a");
              assertThat(cfg.get(1).getRequests()).isNullOrEmpty();
              assertThat(cfg.get(2).getRequests()).containsExactly("a");
            }),
        tc(
            "binding conditions copied from the device",
            Scenario.of(
                    slice("s", "x", device("d").withBindingConditions("ready").build())
                        .withPool("p", 0, 1)
                        .withAllNodes()
                        .build())
                .withClasses(deviceClass("plain", ANY_GPU)),
            claim("c", request("r", "plain").build()).build(),
            r -> {
              assertThat(first(r).getBindingConditions()).containsExactly("ready");
              assertThat(first(r).getBindingFailureConditions()).containsExactly("failed");
            }));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void result(
      Scenario s,
      io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim claim,
      Consumer<AllocationResult> check) {
    ClaimOutcome o = s.allocate(node("node-a", "rack", "r1", "zone", "z1"), claim).get(0);
    assertThat(o).isInstanceOf(ClaimOutcome.Allocated.class);
    check.accept(((ClaimOutcome.Allocated) o).result());
  }
}
