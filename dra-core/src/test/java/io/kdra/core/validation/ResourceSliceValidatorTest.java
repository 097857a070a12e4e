package io.kdra.core.validation;

import static io.kdra.core.testing.Fixtures.device;
import static io.kdra.core.testing.Fixtures.slice;
import static io.kdra.core.testing.Fixtures.stringAttribute;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ResourceSliceValidatorTest {

  /** Breaks a valid slice; {@code expected} are "field: message" lines, in order. */
  record Case(Consumer<ResourceSlice> change, List<String> expected) {}

  private static Named<Case> c(String name, Consumer<ResourceSlice> change, String... expected) {
    return Named.of(name, new Case(change, List.of(expected)));
  }

  private static Device dev(ResourceSlice s) {
    return s.getSpec().getDevices().get(0);
  }

  private static List<Device> devices(int n, Consumer<Device> each) {
    List<Device> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Device d = device("gpu-" + i);
      each.accept(d);
      list.add(d);
    }
    return list;
  }

  private static DeviceTaint taint(String key, String effect) {
    return new DeviceTaintBuilder().withKey(key).withEffect(effect).build();
  }

  private static Map<String, Counter> counters(int n) {
    Map<String, Counter> m = new LinkedHashMap<>();
    IntStream.range(0, n).forEach(i -> m.put("c" + i, new Counter(new Quantity("1"))));
    return m;
  }

  private static DeviceCounterConsumption consumes(String set) {
    return new DeviceCounterConsumption(set, counters(1));
  }

  private static NodeSelector terms(int n) {
    NodeSelectorBuilder b = new NodeSelectorBuilder();
    IntStream.range(0, n).forEach(i -> b.addToNodeSelectorTerms(new NodeSelectorTerm()));
    return b.build();
  }

  private static final String MULTI =
      "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
          + "`perDeviceNodeSelection` is required";

  static Stream<Named<Case>> cases() {
    return Stream.of(
        c("valid: node-local slice", s -> {}),
        c(
            "valid: allNodes",
            s -> {
              s.getSpec().setNodeName(null);
              s.getSpec().setAllNodes(true);
            }),
        c(
            "valid: node selector with one term",
            s -> {
              s.getSpec().setNodeName(null);
              s.getSpec().setNodeSelector(terms(1));
            }),
        c(
            "valid: per-device node selection",
            s -> {
              s.getSpec().setNodeName(null);
              s.getSpec().setPerDeviceNodeSelection(true);
              dev(s).setNodeName("node-a");
            }),
        c("valid: 128 plain devices", s -> s.getSpec().setDevices(devices(128, d -> {}))),
        c(
            "valid: 64 tainted devices",
            s ->
                s.getSpec()
                    .setDevices(devices(64, d -> d.setTaints(List.of(taint("k", "NoSchedule")))))),
        c(
            "valid: counter sets without devices",
            s -> {
              s.getSpec().setDevices(null);
              s.getSpec().setSharedCounters(List.of(new CounterSet(counters(32), "set-0")));
            }),
        c(
            "valid: device consumes counters of another slice",
            s -> dev(s).setConsumesCounters(List.of(consumes("set-0")))),
        c(
            "valid: version attribute",
            s ->
                dev(s)
                    .getAttributes()
                    .put(
                        "gpu.example.com/fw",
                        new DeviceAttributeBuilder().withVersion("1.2.3-rc.1").build())),
        c(
            "valid: taint with value and effect None",
            s ->
                dev(s)
                    .setTaints(
                        List.of(
                            new DeviceTaintBuilder()
                                .withKey("example.com/degraded")
                                .withValue("yes")
                                .withEffect("None")
                                .build()))),
        c(
            "metadata: no name",
            s -> s.getMetadata().setName(null),
            "metadata.name: Required value: name or generateName is required"),
        c(
            "metadata: generateName suffices",
            s -> {
              s.getMetadata().setName(null);
              s.getMetadata().setGenerateName("node-a-gpu-");
            }),
        c(
            "metadata: bad name",
            s -> s.getMetadata().setName("Node_A"),
            "metadata.name: Invalid value: \"Node_A\": " + Names.SUBDOMAIN_ERROR),
        c("spec: missing", s -> s.setSpec(null), "spec: Required value"),
        c("driver: empty", s -> s.getSpec().setDriver(""), "spec.driver: Required value"),
        c(
            "driver: too long",
            s -> s.getSpec().setDriver("a".repeat(64)),
            "spec.driver: Too long: may not be more than 63 bytes"),
        c(
            "driver: underscore",
            s -> s.getSpec().setDriver("gpu_example"),
            "spec.driver: Invalid value: \"gpu_example\": " + Names.SUBDOMAIN_ERROR),
        c(
            "pool: no name",
            s -> s.getSpec().getPool().setName(null),
            "spec.pool.name: Required value"),
        c(
            "pool: empty part",
            s -> s.getSpec().getPool().setName("a//b"),
            "spec.pool.name: Invalid value: \"\": " + Names.SUBDOMAIN_ERROR),
        c(
            "pool: too long",
            s -> s.getSpec().getPool().setName("a".repeat(127) + "/" + "b".repeat(126)),
            "spec.pool.name: Too long: may not be more than 253 bytes"),
        c(
            "pool: negative generation",
            s -> s.getSpec().getPool().setGeneration(-1L),
            "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero"),
        c(
            "pool: zero slice count",
            s -> s.getSpec().getPool().setResourceSliceCount(0L),
            "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"),
        c(
            "pool: unset slice count is zero",
            s -> s.getSpec().getPool().setResourceSliceCount(null),
            "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"),
        c("node: none set", s -> s.getSpec().setNodeName(null), "spec: Required value: " + MULTI),
        c(
            "node: two set",
            s -> s.getSpec().setAllNodes(true),
            "spec: Invalid value: \"{`nodeName`, `allNodes`}\": "
                + MULTI
                + ", but multiple fields are set"),
        c(
            "node: allNodes false",
            s -> {
              s.getSpec().setNodeName(null);
              s.getSpec().setAllNodes(false);
            },
            "spec.allNodes: Invalid value: false: must be either unset or set to true",
            "spec: Required value: " + MULTI),
        c(
            "node: perDeviceNodeSelection false",
            s -> s.getSpec().setPerDeviceNodeSelection(false),
            "spec.perDeviceNodeSelection: Invalid value: false: must be either unset or set to "
                + "true"),
        c(
            "node: empty nodeName",
            s -> s.getSpec().setNodeName(""),
            "spec.nodeName: Invalid value: \"\": must be either unset or set to a non-empty string",
            "spec: Required value: " + MULTI),
        c(
            "node: bad nodeName",
            s -> s.getSpec().setNodeName("Node_A"),
            "spec.nodeName: Invalid value: \"Node_A\": " + Names.SUBDOMAIN_ERROR),
        c(
            "node: selector with two terms",
            s -> {
              s.getSpec().setNodeName(null);
              s.getSpec().setNodeSelector(terms(2));
            },
            "spec.nodeSelector.nodeSelectorTerms: Invalid value: must have exactly one node "
                + "selector term"),
        c(
            "devices: 129",
            s -> s.getSpec().setDevices(devices(129, d -> {})),
            "spec.devices: Too many: 129: must have at most 128 items"),
        c(
            "devices: 65 when one has a taint",
            s -> {
              s.getSpec().setDevices(devices(65, d -> {}));
              dev(s).setTaints(List.of(taint("k", "NoSchedule")));
            },
            "spec.devices: Too many: 65: must have at most 64 items"),
        c(
            "devices: 65 when one consumes counters",
            s -> {
              s.getSpec().setDevices(devices(65, d -> {}));
              dev(s).setConsumesCounters(List.of(consumes("set-0")));
            },
            "spec.devices: Too many: 65: must have at most 64 items"),
        c(
            "devices: duplicate name",
            s -> s.getSpec().getDevices().add(device("gpu-0")),
            "spec.devices[1]: Duplicate value: \"gpu-0\""),
        c(
            "devices: sharedCounters too",
            s -> s.getSpec().setSharedCounters(List.of(new CounterSet(counters(1), "set-0"))),
            "spec: Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed"),
        c("device: no name", s -> dev(s).setName(""), "spec.devices[0].name: Required value"),
        c(
            "device: name not a label",
            s -> dev(s).setName("gpu.0"),
            "spec.devices[0].name: Invalid value: \"gpu.0\": " + Names.LABEL_ERROR),
        c(
            "device: 33 attributes and capacities",
            s ->
                IntStream.range(0, 31)
                    .forEach(i -> dev(s).getAttributes().put("a" + i, stringAttribute("x"))),
            "spec.devices[0]: Invalid value: 33: the total number of attributes and capacities "
                + "must not exceed 32"),
        c(
            "attribute: two values",
            s -> dev(s).getAttributes().get("model").setBool(true),
            "spec.devices[0].attributes[\"model\"]: Invalid value: exactly one value must be "
                + "specified"),
        c(
            "attribute: no value",
            s -> dev(s).getAttributes().get("model").setString(null),
            "spec.devices[0].attributes[\"model\"]: Invalid value: \"\": exactly one value must "
                + "be specified"),
        c(
            "attribute: string of 65",
            s -> dev(s).getAttributes().get("model").setString("x".repeat(65)),
            "spec.devices[0].attributes[\"model\"].string: Too long: may not be more than 64 "
                + "bytes"),
        c(
            "attribute: version with v",
            s ->
                dev(s)
                    .getAttributes()
                    .put("fw", new DeviceAttributeBuilder().withVersion("v1.0.0").build()),
            "spec.devices[0].attributes[\"fw\"].version: Invalid value: \"v1.0.0\": "
                + Names.SEMVER_ERROR),
        c(
            "attribute: key with bad domain",
            s -> dev(s).getAttributes().put("Bad_Domain/model", stringAttribute("x")),
            "spec.devices[0].attributes: Invalid value: \"Bad_Domain\": " + Names.SUBDOMAIN_ERROR),
        c(
            "attribute: key with two slashes",
            s -> dev(s).getAttributes().put("a.com/b/c", stringAttribute("x")),
            "spec.devices[0].attributes: Invalid value: \"a.com/b/c\": must not contain more "
                + "than one slash"),
        c(
            "attribute: id too long",
            s -> dev(s).getAttributes().put("a".repeat(33), stringAttribute("x")),
            "spec.devices[0].attributes: Too long: may not be more than 32 bytes"),
        c(
            "capacity: bad key",
            s -> dev(s).getCapacity().put("mem-ory", new DeviceCapacity(null, new Quantity("1"))),
            "spec.devices[0].capacity: Invalid value: \"mem-ory\": " + Names.C_IDENTIFIER_ERROR),
        c(
            "capacity: bad quantity",
            s -> dev(s).getCapacity().get("memory").setValue(new Quantity("12", "XB")),
            "spec.devices[0].capacity[\"memory\"].value: Invalid value: \"12XB\": invalid "
                + "quantity \"12XB\": unknown suffix 'XB'"),
        c(
            "capacity: requestPolicy needs allowMultipleAllocations",
            s ->
                dev(s)
                    .getCapacity()
                    .get("memory")
                    .setRequestPolicy(
                        new CapacityRequestPolicyBuilder()
                            .withDefault(new Quantity("1Gi"))
                            .build()),
            "spec.devices[0].capacity[\"memory\"].requestPolicy: Forbidden: "
                + "allowMultipleAllocations must be true"),
        c(
            "capacity: validValues need a default",
            s -> {
              dev(s).setAllowMultipleAllocations(true);
              dev(s)
                  .getCapacity()
                  .get("memory")
                  .setRequestPolicy(
                      new CapacityRequestPolicyBuilder()
                          .withValidValues(new Quantity("1Gi"))
                          .build());
            },
            "spec.devices[0].capacity[\"memory\"].requestPolicy.default: Required value: "
                + "required when validValues is defined"),
        c(
            "taints: 17",
            s ->
                dev(s)
                    .setTaints(
                        new ArrayList<>(
                            IntStream.range(0, 17)
                                .mapToObj(i -> taint("k" + i, "NoSchedule"))
                                .toList())),
            "spec.devices[0].taints: Too many: 17: must have at most 16 items"),
        c(
            "taint: empty key, unknown effect",
            s -> dev(s).setTaints(List.of(taint("", "Evict"))),
            "spec.devices[0].taints[0].key: Invalid value: \"\": name part must be non-empty",
            "spec.devices[0].taints[0].key: Invalid value: \"\": name part "
                + Names.QUALIFIED_NAME_ERROR,
            "spec.devices[0].taints[0].effect: Unsupported value: \"Evict\": supported values: "
                + "\"NoExecute\", \"NoSchedule\", \"None\""),
        c(
            "taint: no effect, bad value",
            s ->
                dev(s)
                    .setTaints(
                        List.of(new DeviceTaintBuilder().withKey("k").withValue("a b").build())),
            "spec.devices[0].taints[0].value: Invalid value: \"a b\": " + Names.LABEL_VALUE_ERROR,
            "spec.devices[0].taints[0].effect: Required value"),
        c(
            "consumesCounters: 3",
            s -> dev(s).setConsumesCounters(List.of(consumes("a"), consumes("b"), consumes("c"))),
            "spec.devices[0].consumesCounters: Too many: 3: must have at most 2 items"),
        c(
            "consumesCounters: same set twice",
            s -> dev(s).setConsumesCounters(List.of(consumes("a"), consumes("a"))),
            "spec.devices[0].consumesCounters[1]: Duplicate value: \"a\""),
        c(
            "consumesCounters: no set, no counters",
            s -> dev(s).setConsumesCounters(List.of(new DeviceCounterConsumption("", Map.of()))),
            "spec.devices[0].consumesCounters[0].counterSet: Required value",
            "spec.devices[0].consumesCounters[0].counters: Required value"),
        c(
            "consumesCounters: 33 counters",
            s ->
                dev(s)
                    .setConsumesCounters(List.of(new DeviceCounterConsumption("a", counters(33)))),
            "spec.devices[0].consumesCounters[0].counters: Too many: 33: must have at most 32 "
                + "items"),
        c(
            "consumesCounters: bad counter name",
            s ->
                dev(s)
                    .setConsumesCounters(
                        List.of(
                            new DeviceCounterConsumption(
                                "a", Map.of("Mem", new Counter(new Quantity("1")))))),
            "spec.devices[0].consumesCounters[0].counters: Invalid value: \"Mem\": "
                + Names.LABEL_ERROR),
        c(
            "per-device: device without node fields",
            s -> {
              s.getSpec().setNodeName(null);
              s.getSpec().setPerDeviceNodeSelection(true);
            },
            "spec.devices[0]: Required value: " + DeviceChecks.PER_DEVICE_FIELDS),
        c(
            "per-device: two node fields",
            s -> {
              s.getSpec().setNodeName(null);
              s.getSpec().setPerDeviceNodeSelection(true);
              dev(s).setNodeName("node-a");
              dev(s).setAllNodes(true);
            },
            "spec.devices[0]: Invalid value: \"{`nodeName`, `allNodes`}\": "
                + DeviceChecks.PER_DEVICE_FIELDS),
        c(
            "per-device: node field without the slice flag",
            s -> dev(s).setAllNodes(true),
            "spec.devices[0]: Invalid value: `nodeName`, `nodeSelector` and `allNodes` can only "
                + "be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"),
        c(
            "counter sets: 9",
            s -> {
              s.getSpec().setDevices(null);
              s.getSpec()
                  .setSharedCounters(
                      IntStream.range(0, 9)
                          .mapToObj(i -> new CounterSet(counters(1), "s" + i))
                          .toList());
            },
            "spec.sharedCounters: Too many: 9: must have at most 8 items"),
        c(
            "counter sets: 33 counters, duplicate and missing names",
            s -> {
              s.getSpec().setDevices(null);
              s.getSpec()
                  .setSharedCounters(
                      List.of(
                          new CounterSet(counters(33), "a"),
                          new CounterSet(counters(1), "a"),
                          new CounterSet(counters(1), null)));
            },
            "spec.sharedCounters[0].counters: Too many: 33: must have at most 32 items",
            "spec.sharedCounters[2].name: Required value",
            "spec.sharedCounters[1]: Duplicate value: \"a\""),
        c(
            "binding: conditions without failure conditions",
            s -> dev(s).setBindingConditions(List.of("attached")),
            "spec.devices[0].bindingFailureConditions: Invalid value: bindingFailureConditions "
                + "are required to use bindingConditions"),
        c(
            "binding: 5 conditions, overlap",
            s -> {
              dev(s).setBindingConditions(List.of("a", "b", "c", "d", "e"));
              dev(s).setBindingFailureConditions(List.of("a"));
            },
            "spec.devices[0].bindingConditions: Too many: 5: must have at most 4 items",
            "spec.devices[0].bindingFailureConditions[0]: Invalid value: \"a\": "
                + "bindingFailureConditions must not overlap with bindingConditions"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void validate(Case c) {
    ResourceSlice slice = slice();
    c.change().accept(slice);
    assertThat(lines(ResourceSliceValidator.validate(slice)))
        .containsExactlyElementsOf(c.expected());
  }

  @Test
  void errorsNameTheSlice() {
    ResourceSlice slice = slice();
    slice.getSpec().setDevices(devices(130, d -> {}));
    assertThat(ResourceSliceValidator.validate(slice))
        .singleElement()
        .hasToString(
            "ResourceSlice node-a-gpu: spec.devices: Too many: 130: must have at most 128 items");
  }

  static List<String> lines(List<ValidationError> errors) {
    return errors.stream().map(e -> e.field() + ": " + e.message()).toList();
  }
}
