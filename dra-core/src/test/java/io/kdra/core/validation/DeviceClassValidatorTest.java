package io.kdra.core.validation;

import static io.kdra.core.testing.Fixtures.deviceClass;
import static io.kdra.core.validation.ResourceSliceValidatorTest.lines;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.CELDeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.OpaqueDeviceConfiguration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class DeviceClassValidatorTest {

  record Case(Consumer<DeviceClass> change, List<String> expected) {}

  private static Named<Case> c(String name, Consumer<DeviceClass> change, String... expected) {
    return Named.of(name, new Case(change, List.of(expected)));
  }

  private static DeviceClassConfiguration config(String driver, Object params) {
    return new DeviceClassConfiguration(new OpaqueDeviceConfiguration(driver, params));
  }

  private static List<DeviceSelector> selectors(int n) {
    return new ArrayList<>(
        IntStream.range(0, n)
            .mapToObj(i -> new DeviceSelector(new CELDeviceSelector("true")))
            .toList());
  }

  static Stream<Named<Case>> cases() {
    return Stream.of(
        c("valid: one selector", d -> {}),
        c("valid: no spec", d -> d.setSpec(null)),
        c(
            "valid: 32 selectors and 32 configs",
            d -> {
              d.getSpec().setSelectors(selectors(32));
              d.getSpec()
                  .setConfig(
                      new ArrayList<>(
                          IntStream.range(0, 32)
                              .mapToObj(i -> config("gpu.example.com", Map.of("i", i)))
                              .toList()));
            }),
        c(
            "metadata: no name",
            d -> d.getMetadata().setName(""),
            "metadata.name: Required value: name or generateName is required"),
        c(
            "selectors: 33",
            d -> d.getSpec().setSelectors(selectors(33)),
            "spec.selectors: Too many: 33: must have at most 32 items"),
        c(
            "selector: no expression",
            d -> d.getSpec().getSelectors().get(0).getCel().setExpression(null),
            "spec.selectors[0].cel.expression: Required value"),
        c(
            "selector: does not compile",
            d -> d.getSpec().getSelectors().get(0).getCel().setExpression("device.vendor == \"x\""),
            "spec.selectors[0].cel.expression: Invalid value: \"device.vendor == \\\"x\\\"\": "
                + "compilation failed: line 1, column 7: undefined field 'vendor'; the device has "
                + "driver, attributes, capacity and allowMultipleAllocations"),
        c(
            "selector: too expensive",
            d ->
                d.getSpec()
                    .getSelectors()
                    .get(0)
                    .getCel()
                    .setExpression(
                        "["
                            + "1,".repeat(2000)
                            + "1].all(a, ["
                            + "1,".repeat(2000)
                            + "1].all(b, a == b))"),
            "spec.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit"),
        c(
            "config: 33",
            d ->
                d.getSpec()
                    .setConfig(
                        new ArrayList<>(
                            IntStream.range(0, 33)
                                .mapToObj(i -> config("gpu.example.com", Map.of()))
                                .toList())),
            "spec.config: Too many: 33: must have at most 32 items"),
        c(
            "config: missing opaque",
            d -> d.getSpec().setConfig(List.of(new DeviceClassConfiguration())),
            "spec.config[0].opaque: Required value"),
        c(
            "config: bad driver and JSON null",
            d -> d.getSpec().setConfig(List.of(config("Bad_Driver", null))),
            "spec.config[0].opaque.driver: Invalid value: \"Bad_Driver\": " + Names.SUBDOMAIN_ERROR,
            "spec.config[0].opaque.parameters: Required value"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void validate(Case c) {
    DeviceClass deviceClass = deviceClass();
    c.change().accept(deviceClass);
    assertThat(lines(DeviceClassValidator.validate(deviceClass)))
        .containsExactlyElementsOf(c.expected());
  }
}
