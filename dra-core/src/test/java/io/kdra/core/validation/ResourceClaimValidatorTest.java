package io.kdra.core.validation;

import static io.kdra.core.testing.Fixtures.claim;
import static io.kdra.core.testing.Fixtures.request;
import static io.kdra.core.validation.ResourceSliceValidatorTest.lines;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.OpaqueDeviceConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ResourceClaimValidatorTest {

  record Case(Consumer<ResourceClaim> change, List<String> expected) {}

  private static final String R0 = "spec.devices.requests[0]";
  private static final String X0 = R0 + ".exactly";
  private static final String MODES = "supported values: \"All\", \"ExactCount\"";
  private static final String EFFECTS = "supported values: \"NoExecute\", \"NoSchedule\", \"None\"";

  private static Named<Case> c(String name, Consumer<ResourceClaim> change, String... expected) {
    return Named.of(name, new Case(change, List.of(expected)));
  }

  private static DeviceClaim devices(ResourceClaim claim) {
    return claim.getSpec().getDevices();
  }

  private static ExactDeviceRequest exactly(ResourceClaim claim) {
    return devices(claim).getRequests().get(0).getExactly();
  }

  private static <T> List<T> many(int n, IntFunction<T> item) {
    return new ArrayList<>(IntStream.range(0, n).mapToObj(item).toList());
  }

  private static DeviceSubRequest sub(String name) {
    return new DeviceSubRequestBuilder().withName(name).withDeviceClassName("gpu").build();
  }

  /** Request "gpu" becomes a firstAvailable of the given subrequests. */
  private static void firstAvailable(ResourceClaim claim, DeviceSubRequest... subs) {
    DeviceRequest r = devices(claim).getRequests().get(0);
    r.setExactly(null);
    r.setFirstAvailable(new ArrayList<>(List.of(subs)));
  }

  private static DeviceSelector cel(String expression) {
    return new DeviceSelector(
        new io.fabric8.kubernetes.api.model.resource.v1.CELDeviceSelector(expression));
  }

  private static DeviceToleration tol(String key, String op, String value, String effect) {
    return new DeviceToleration(effect, key, op, null, value);
  }

  private static DeviceConstraint constraint(String match, String distinct, String... refs) {
    return new DeviceConstraint(distinct, match, new ArrayList<>(List.of(refs)));
  }

  private static DeviceClaimConfiguration config(String driver, Object params, String... refs) {
    return new DeviceClaimConfigurationBuilder()
        .withRequests(refs)
        .withOpaque(new OpaqueDeviceConfiguration(driver, params))
        .build();
  }

  private static ResourceClaimConsumerReference pod(String name, String uid) {
    return new ResourceClaimConsumerReference("", name, "pods", uid);
  }

  /** An allocation of one device for request "gpu", reserved for the given consumers. */
  private static void allocated(ResourceClaim claim, ResourceClaimConsumerReference... refs) {
    claim.setStatus(
        new ResourceClaimStatus(
            new AllocationResultBuilder()
                .withNewDevices()
                .addToResults(
                    new DeviceRequestAllocationResultBuilder()
                        .withRequest("gpu")
                        .withDriver("gpu.example.com")
                        .withPool("node-a")
                        .withDevice("gpu-0")
                        .build())
                .endDevices()
                .build(),
            new ArrayList<>(),
            new ArrayList<>(List.of(refs))));
  }

  static Stream<Named<Case>> cases() {
    String ref = ClaimSpecChecks.REQUEST_REF;
    return Stream.of(
        c("valid: one exact request", r -> {}),
        c("valid: no requests at all", r -> devices(r).setRequests(null)),
        c(
            "valid: firstAvailable, constraint and config referring to it",
            r -> {
              firstAvailable(r, sub("big"), sub("small"));
              devices(r)
                  .setConstraints(List.of(constraint("gpu.example.com/numa", null, "gpu/big")));
              devices(r)
                  .setConfig(List.of(config("gpu.example.com", Map.of("kind", "Cfg"), "gpu")));
            }),
        c("valid: all devices, count unset", r -> exactly(r).setAllocationMode("All")),
        c(
            "valid: explicit ExactCount of 2",
            r -> {
              exactly(r).setAllocationMode("ExactCount");
              exactly(r).setCount(2L);
            }),
        c(
            "valid: tolerations",
            r ->
                exactly(r)
                    .setTolerations(
                        List.of(
                            tol("", "Exists", "", null),
                            tol("example.com/degraded", "Equal", "yes", "NoExecute"),
                            tol("k", null, "", "None")))),
        c(
            "valid: distinctAttribute for all requests",
            r -> devices(r).setConstraints(List.of(constraint(null, "net.example.com/port")))),
        c("valid: allocated and reserved", r -> allocated(r, pod("p", "uid-1"))),
        c(
            "metadata: bad name",
            r -> r.getMetadata().setName("Claim"),
            "metadata.name: Invalid value: \"Claim\": " + Names.SUBDOMAIN_ERROR),
        c(
            "requests: 33",
            r -> devices(r).setRequests(many(33, i -> request("r" + i))),
            "spec.devices.requests: Too many: 33: must have at most 32 items"),
        c(
            "requests: duplicate name",
            r -> devices(r).getRequests().add(request("gpu")),
            "spec.devices.requests[1]: Duplicate value: \"gpu\""),
        c(
            "request: no name",
            r -> devices(r).getRequests().get(0).setName(null),
            R0 + ".name: Required value"),
        c(
            "request: name not a label",
            r -> devices(r).getRequests().get(0).setName("Gpu"),
            R0 + ".name: Invalid value: \"Gpu\": " + Names.LABEL_ERROR),
        c(
            "request: neither exactly nor firstAvailable",
            r -> devices(r).getRequests().get(0).setExactly(null),
            R0 + ": Required value: exactly one of `exactly` or `firstAvailable` is required"),
        c(
            "request: both",
            r -> devices(r).getRequests().get(0).setFirstAvailable(List.of(sub("a"))),
            R0
                + ": Invalid value: exactly one of `exactly` or `firstAvailable` is required, but "
                + "multiple fields are set"),
        c(
            "exactly: no class",
            r -> exactly(r).setDeviceClassName(""),
            X0 + ".deviceClassName: Required value"),
        c(
            "exactly: bad class",
            r -> exactly(r).setDeviceClassName("GPU"),
            X0 + ".deviceClassName: Invalid value: \"GPU\": " + Names.SUBDOMAIN_ERROR),
        c(
            "exactly: unknown mode",
            r -> exactly(r).setAllocationMode("Some"),
            X0 + ".allocationMode: Unsupported value: \"Some\": " + MODES),
        c(
            "exactly: count 0 is defaulted to 1 (checked against a real API server)",
            r -> exactly(r).setCount(0L)),
        c(
            "exactly: negative count",
            r -> exactly(r).setCount(-1L),
            X0 + ".count: Invalid value: -1: must be greater than zero"),
        c(
            "exactly: count with All",
            r -> {
              exactly(r).setAllocationMode("All");
              exactly(r).setCount(2L);
            },
            X0 + ".count: Invalid value: 2: must not be specified when allocationMode is 'All'"),
        c(
            "selectors: 33",
            r -> exactly(r).setSelectors(many(33, i -> cel("true"))),
            X0 + ".selectors: Too many: 33: must have at most 32 items"),
        c(
            "selector: no cel",
            r -> exactly(r).setSelectors(List.of(new DeviceSelector())),
            X0 + ".selectors[0].cel: Required value"),
        c(
            "selector: empty expression",
            r -> exactly(r).setSelectors(List.of(cel(""))),
            X0 + ".selectors[0].cel.expression: Required value"),
        c(
            "selector: expression too long",
            r -> exactly(r).setSelectors(List.of(cel("true" + " ".repeat(10237)))),
            X0 + ".selectors[0].cel.expression: Too long: may not be more than 10240 bytes"),
        c(
            "firstAvailable: 9",
            r -> firstAvailable(r, many(9, i -> sub("s" + i)).toArray(DeviceSubRequest[]::new)),
            R0 + ".firstAvailable: Too many: 9: must have at most 8 items"),
        c(
            "firstAvailable: duplicate name",
            r -> firstAvailable(r, sub("a"), sub("a")),
            R0 + ".firstAvailable[1]: Duplicate value: \"a\""),
        c(
            "firstAvailable: bad subrequest",
            r -> {
              DeviceSubRequest bad = sub(null);
              bad.setDeviceClassName(null);
              bad.setCount(-1L);
              firstAvailable(r, sub("a"), sub("b"), bad);
            },
            R0 + ".firstAvailable[2].name: Required value",
            R0 + ".firstAvailable[2].deviceClassName: Required value",
            R0 + ".firstAvailable[2].count: Invalid value: -1: must be greater than zero"),
        c(
            "firstAvailable: unknown mode in subrequest",
            r -> {
              DeviceSubRequest s = sub("a");
              s.setAllocationMode("Any");
              firstAvailable(r, s);
            },
            R0 + ".firstAvailable[0].allocationMode: Unsupported value: \"Any\": " + MODES),
        c(
            "tolerations: 17",
            r -> exactly(r).setTolerations(many(17, i -> tol("k" + i, "Exists", "", null))),
            X0 + ".tolerations: Too many: 17: must have at most 16 items"),
        c(
            "toleration: Exists with value",
            r -> exactly(r).setTolerations(List.of(tol("k", "Exists", "v", null))),
            X0
                + ".tolerations[0].value: Invalid value: \"v\": must be empty for operator "
                + "`Exists`"),
        c(
            "toleration: empty key needs Exists",
            r -> exactly(r).setTolerations(List.of(tol("", "Equal", "", null))),
            X0
                + ".tolerations[0].operator: Invalid value: \"Equal\": must be `Exists` when `key` "
                + "is empty, which means \"match all values and all keys\""),
        c(
            "toleration: unknown operator and effect",
            r -> exactly(r).setTolerations(List.of(tol("k", "In", "", "Evict"))),
            X0
                + ".tolerations[0].operator: Unsupported value: \"In\": supported values: "
                + "\"Equal\", \"Exists\"",
            X0 + ".tolerations[0].effect: Unsupported value: \"Evict\": " + EFFECTS),
        c(
            "toleration: bad key and value",
            r -> exactly(r).setTolerations(List.of(tol("a/b/c", "Equal", "a b", null))),
            X0
                + ".tolerations[0].key: Invalid value: \"a/b/c\": a qualified name "
                + Names.QUALIFIED_NAME_ERROR
                + " with an optional DNS subdomain prefix and '/' "
                + "(e.g. 'example.com/MyName')",
            X0 + ".tolerations[0].value: Invalid value: \"a b\": " + Names.LABEL_VALUE_ERROR),
        c(
            "constraints: 33",
            r -> devices(r).setConstraints(many(33, i -> constraint("a.com/x", null))),
            "spec.devices.constraints: Too many: 33: must have at most 32 items"),
        c(
            "constraint: unknown request",
            r -> devices(r).setConstraints(List.of(constraint("a.com/x", null, "nic"))),
            "spec.devices.constraints[0].requests[0]: Invalid value: \"nic\": " + ref),
        c(
            "constraint: subrequest of a request without any",
            r -> devices(r).setConstraints(List.of(constraint("a.com/x", null, "gpu/big"))),
            "spec.devices.constraints[0].requests[0]: Invalid value: \"gpu/big\": " + ref),
        c(
            "constraint: three segments",
            r -> devices(r).setConstraints(List.of(constraint("a.com/x", null, "gpu/a/b"))),
            "spec.devices.constraints[0].requests[0]: Invalid value: \"gpu/a/b\": " + ref),
        c(
            "constraint: duplicate reference",
            r -> devices(r).setConstraints(List.of(constraint("a.com/x", null, "gpu", "gpu"))),
            "spec.devices.constraints[0].requests[1]: Duplicate value: \"gpu\""),
        c(
            "constraint: both attributes",
            r -> devices(r).setConstraints(List.of(constraint("a.com/x", "a.com/y"))),
            "spec.devices.constraints[0]: Invalid value: "
                + ClaimSpecChecks.ONE_ATTRIBUTE
                + ", but multiple fields are set"),
        c(
            "constraint: no attribute",
            r -> devices(r).setConstraints(List.of(constraint(null, null))),
            "spec.devices.constraints[0]: Required value: " + ClaimSpecChecks.ONE_ATTRIBUTE),
        c(
            "constraint: attribute without domain",
            r -> devices(r).setConstraints(List.of(constraint("numa", null))),
            "spec.devices.constraints[0].matchAttribute: Invalid value: \"numa\": a fully "
                + "qualified name must be a domain and a name separated by a slash"),
        c(
            "config: 33",
            r -> devices(r).setConfig(many(33, i -> config("a.com", Map.of()))),
            "spec.devices.config: Too many: 33: must have at most 32 items"),
        c(
            "config: no opaque",
            r -> devices(r).setConfig(List.of(new DeviceClaimConfiguration())),
            "spec.devices.config[0].opaque: Required value"),
        c(
            "config: bad driver, unknown request",
            r -> devices(r).setConfig(List.of(config("", Map.of(), "nic"))),
            "spec.devices.config[0].requests[0]: Invalid value: \"nic\": " + ref,
            "spec.devices.config[0].opaque.driver: Required value"),
        c(
            "config: no parameters",
            r -> devices(r).setConfig(List.of(config("a.com", null))),
            "spec.devices.config[0].opaque.parameters: Required value"),
        c(
            "config: parameters are a list",
            r -> devices(r).setConfig(List.of(config("a.com", List.of(1)))),
            "spec.devices.config[0].opaque.parameters: Invalid value: \"<value omitted>\": must "
                + "be a valid JSON object"),
        c(
            "config: parameters are a string",
            r -> devices(r).setConfig(List.of(config("a.com", "{}"))),
            "spec.devices.config[0].opaque.parameters: Invalid value: \"<value omitted>\": must "
                + "be a valid JSON object"),
        c(
            "config: parameters of 10241 bytes",
            r -> devices(r).setConfig(List.of(config("a.com", Map.of("k", "x".repeat(10233))))),
            "spec.devices.config[0].opaque.parameters: Too long: may not be more than 10240 "
                + "bytes"),
        c(
            "status: reserved without allocation",
            r -> {
              allocated(r, pod("p", "u1"));
              r.getStatus().setAllocation(null);
            },
            "status.reservedFor: Forbidden: may not be specified when `allocated` is not set"),
        c(
            "status: 257 consumers",
            r ->
                allocated(
                    r,
                    many(257, i -> pod("p" + i, "u" + i))
                        .toArray(ResourceClaimConsumerReference[]::new)),
            "status.reservedFor: Too many: 257: must have at most 256 items"),
        c(
            "status: incomplete and duplicate consumers",
            r -> allocated(r, pod("p", "u1"), pod("q", "u1"), new ResourceClaimConsumerReference()),
            "status.reservedFor[2].resource: Required value",
            "status.reservedFor[2].name: Required value",
            "status.reservedFor[2].uid: Required value",
            "status.reservedFor[1]: Duplicate value: \"u1\""),
        c(
            "status: bad result and config",
            r -> {
              allocated(r);
              r.getStatus().getAllocation().getDevices().getResults().get(0).setRequest("nic");
              r.getStatus().getAllocation().getDevices().getResults().get(0).setDevice("GPU");
              r.getStatus()
                  .getAllocation()
                  .getDevices()
                  .setConfig(
                      List.of(
                          new DeviceAllocationConfigurationBuilder()
                              .withSource("FromPod")
                              .withOpaque(new OpaqueDeviceConfiguration("a.com", Map.of()))
                              .build()));
            },
            "status.allocation.devices.results[0].request: Invalid value: \"nic\": " + ref,
            "status.allocation.devices.results[0].device: Invalid value: \"GPU\": "
                + Names.LABEL_ERROR,
            "status.allocation.devices.config[0].source: Unsupported value: \"FromPod\": "
                + "supported values: \"FromClaim\", \"FromClass\""));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void validate(Case c) {
    ResourceClaim claim = claim();
    c.change().accept(claim);
    assertThat(lines(ResourceClaimValidator.validate(claim)))
        .containsExactlyElementsOf(c.expected());
  }

  @Test
  void errorsNameTheNamespacedClaim() {
    ResourceClaim claim = claim();
    exactly(claim).setCount(-2L);
    assertThat(ResourceClaimValidator.validate(claim))
        .singleElement()
        .hasToString(
            "ResourceClaim ns/claim: "
                + X0
                + ".count: Invalid value: -2: must be greater than zero");
  }

  @Test
  void templatesCheckTheirSpecSpecWithTheSameRules() {
    ResourceClaimTemplate template =
        new ResourceClaimTemplateBuilder()
            .withNewMetadata()
            .withNamespace("ns")
            .withName("tmpl")
            .endMetadata()
            .withNewSpec()
            .withSpec(claim().getSpec())
            .endSpec()
            .build();
    assertThat(ResourceClaimValidator.validate(template)).isEmpty();

    template
        .getSpec()
        .getSpec()
        .getDevices()
        .getRequests()
        .get(0)
        .getExactly()
        .setAllocationMode("Some");
    assertThat(ResourceClaimValidator.validate(template))
        .singleElement()
        .hasToString(
            "ResourceClaimTemplate ns/tmpl: spec.spec.devices.requests[0].exactly.allocationMode: "
                + "Unsupported value: \"Some\": "
                + MODES);

    template.setSpec(null);
    assertThat(lines(ResourceClaimValidator.validate(template)))
        .containsExactly("spec: Required value");
  }
}
