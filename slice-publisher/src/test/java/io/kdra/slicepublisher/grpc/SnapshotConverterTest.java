package io.kdra.slicepublisher.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.kdra.inventory.v1.AttributeValue;
import io.kdra.inventory.v1.CapacityRequestPolicy;
import io.kdra.inventory.v1.CapacityRequestPolicyRange;
import io.kdra.inventory.v1.CounterConsumption;
import io.kdra.inventory.v1.CounterSet;
import io.kdra.inventory.v1.Device;
import io.kdra.inventory.v1.Health;
import io.kdra.inventory.v1.InventorySnapshot;
import java.time.Instant;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SnapshotConverterTest {

  private static final SnapshotConverter CONVERTER = new SnapshotConverter(2, 1024);

  private static InventorySnapshot.Builder snapshot() {
    return InventorySnapshot.newBuilder()
        .setDriver("gpu.kdra.io")
        .setNodeName("node-a")
        .setSequence(1)
        .addSharedCounters(
            CounterSet.newBuilder().setName("gpu-0-mem").putCounters("memory", "80Gi"))
        .addDevices(device());
  }

  private static Device.Builder device() {
    return Device.newBuilder()
        .setName("gpu-0")
        .putAttributes("model", AttributeValue.newBuilder().setString("H100").build())
        .putAttributes("driverVersion", AttributeValue.newBuilder().setVersion("550.54.15").build())
        .putCapacity("memory", "80Gi");
  }

  private static InventorySnapshot withDevice(UnaryOperator<Device.Builder> change) {
    return snapshot().setDevices(0, change.apply(device())).build();
  }

  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of(
            named("upper-case driver", snapshot().setDriver("GPU.io").build()),
            "driver \"GPU.io\": must be lower case (slice names are made from it)"),
        Arguments.of(
            named("driver not a DNS subdomain", snapshot().setDriver("gpu_io").build()),
            "driver \"gpu_io\": a lowercase RFC 1123 subdomain must consist of"),
        Arguments.of(
            named("driver too long", snapshot().setDriver("a".repeat(64)).build()),
            "driver \"" + "a".repeat(64) + "\": must be no more than 63 characters"),
        Arguments.of(
            named("no node", snapshot().setNodeName("").build()),
            "node_name \"\": a lowercase RFC 1123 subdomain must consist of"),
        Arguments.of(
            named(
                "skipping prepare but not unprepare",
                snapshot().addSkipNodeOperations("NodePrepareResources").build()),
            "skip_node_operations: NodePrepareResources cannot be skipped unless"),
        Arguments.of(
            named("unknown node operation", snapshot().addSkipNodeOperations("Prepare").build()),
            "skip_node_operations: Unsupported value: \"Prepare\""),
        Arguments.of(
            named("device name not a DNS label", withDevice(d -> d.setName("GPU_0"))),
            "device \"GPU_0\": name: a lowercase RFC 1123 label must consist of"),
        Arguments.of(
            named("duplicate device", snapshot().addDevices(device()).build()),
            "device \"gpu-0\": name is not unique"),
        Arguments.of(
            named(
                "attribute name not a C identifier",
                withDevice(
                    d ->
                        d.putAttributes(
                            "model-name", AttributeValue.newBuilder().setString("x").build()))),
            "device \"gpu-0\": attribute \"model-name\": name: a valid C identifier must"),
        Arguments.of(
            named(
                "attribute identifier too long",
                withDevice(
                    d ->
                        d.putAttributes(
                            "kdra.io/" + "x".repeat(33),
                            AttributeValue.newBuilder().setInt(1).build()))),
            "device \"gpu-0\": attribute \"kdra.io/"
                + "x".repeat(33)
                + "\": name: must be no more than 32 characters"),
        Arguments.of(
            named(
                "attribute name with two slashes",
                withDevice(
                    d ->
                        d.putAttributes(
                            "a.io/b/c", AttributeValue.newBuilder().setInt(1).build()))),
            "device \"gpu-0\": attribute \"a.io/b/c\": name: must not contain more than one"),
        Arguments.of(
            named(
                "attribute domain invalid",
                withDevice(
                    d ->
                        d.putAttributes(
                            "Bad_Domain/x", AttributeValue.newBuilder().setInt(1).build()))),
            "device \"gpu-0\": attribute \"Bad_Domain/x\": domain: a lowercase RFC 1123"
                + " subdomain must consist of"),
        Arguments.of(
            named(
                "attribute without value",
                withDevice(d -> d.putAttributes("empty", AttributeValue.getDefaultInstance()))),
            "device \"gpu-0\": attribute \"empty\": no value set"),
        Arguments.of(
            named(
                "string too long",
                withDevice(
                    d ->
                        d.putAttributes(
                            "serial",
                            AttributeValue.newBuilder().setString("x".repeat(65)).build()))),
            "device \"gpu-0\": attribute \"serial\": string: must be no more than 64"
                + " characters"),
        Arguments.of(
            named(
                "version not strict semver",
                withDevice(
                    d ->
                        d.putAttributes(
                            "driverVersion",
                            AttributeValue.newBuilder().setVersion("v550.54").build()))),
            "device \"gpu-0\": attribute \"driverVersion\": version \"v550.54\": must be a"
                + " string compatible with semver.org spec 2.0.0"),
        Arguments.of(
            named("capacity not a quantity", withDevice(d -> d.putCapacity("memory", "80 GB"))),
            "device \"gpu-0\": capacity \"memory\": \"80 GB\" is not a quantity"),
        Arguments.of(
            named(
                "too many attributes with the reserved node-label slots",
                withDevice(
                    d -> {
                      IntStream.range(0, 28)
                          .forEach(
                              i ->
                                  d.putAttributes(
                                      "a" + i, AttributeValue.newBuilder().setInt(i).build()));
                      return d;
                    })),
            "device \"gpu-0\": attributes + capacity: 31 entries, at most 30 allowed"),
        Arguments.of(
            named(
                "unknown counter set",
                withDevice(
                    d ->
                        d.addConsumesCounters(
                            CounterConsumption.newBuilder()
                                .setCounterSet("nope")
                                .putCounters("memory", "1Gi")))),
            "device \"gpu-0\": consumes_counters \"nope\": no shared counter set of that name"),
        Arguments.of(
            named(
                "unknown counter",
                withDevice(
                    d ->
                        d.addConsumesCounters(
                            CounterConsumption.newBuilder()
                                .setCounterSet("gpu-0-mem")
                                .putCounters("cores", "1")))),
            "device \"gpu-0\": consumes_counters \"gpu-0-mem\": counter \"cores\" is not in the set"),
        Arguments.of(
            named(
                "three counter consumptions",
                withDevice(
                    d -> {
                      for (int i = 0; i < 3; i++) {
                        d.addConsumesCounters(
                            CounterConsumption.newBuilder().setCounterSet("gpu-0-mem"));
                      }
                      return d;
                    })),
            "device \"gpu-0\": consumes_counters: 3 entries, at most 2 allowed"),
        Arguments.of(
            named(
                "counter consumption without counters",
                withDevice(
                    d ->
                        d.addConsumesCounters(
                            CounterConsumption.newBuilder().setCounterSet("gpu-0-mem")))),
            "device \"gpu-0\": consumes_counters \"gpu-0-mem\": counters: at least one is"
                + " required"),
        Arguments.of(
            named(
                "too many counters in a set",
                snapshot()
                    .setSharedCounters(
                        0,
                        CounterSet.newBuilder()
                            .setName("gpu-0-mem")
                            .putAllCounters(
                                IntStream.range(0, 33)
                                    .boxed()
                                    .collect(Collectors.toMap(i -> "c" + i, i -> "1"))))
                    .build()),
            "shared counter set \"gpu-0-mem\": counters: 33 entries, at most 32 allowed"),
        Arguments.of(
            named(
                "counter set name invalid",
                snapshot().addSharedCounters(CounterSet.newBuilder().setName("Mem")).build()),
            "shared counter set \"Mem\": name: a lowercase RFC 1123 label must consist of"),
        Arguments.of(
            named(
                "request policy without allow_multiple_allocations",
                withDevice(
                    d ->
                        d.putCapacity("shares", "8")
                            .putRequestPolicies(
                                "shares",
                                CapacityRequestPolicy.newBuilder().setDefault("1").build()))),
            "device \"gpu-0\": request_policies: only allowed with allow_multiple_allocations"),
        Arguments.of(
            named(
                "request policy of no capacity",
                withDevice(
                    d ->
                        d.setAllowMultipleAllocations(true)
                            .putRequestPolicies(
                                "shares",
                                CapacityRequestPolicy.newBuilder().setDefault("1").build()))),
            "device \"gpu-0\": request_policies \"shares\": no capacity of that name"),
        Arguments.of(
            named(
                "request policy step not a quantity",
                withDevice(
                    d ->
                        d.setAllowMultipleAllocations(true)
                            .putCapacity("shares", "8")
                            .putRequestPolicies(
                                "shares",
                                CapacityRequestPolicy.newBuilder()
                                    .setDefault("1")
                                    .setValidRange(
                                        CapacityRequestPolicyRange.newBuilder()
                                            .setMin("1")
                                            .setStep("one"))
                                    .build()))),
            "device \"gpu-0\": capacity \"shares\": request_policy: valid_range.step: \"one\""
                + " is not a quantity"),
        Arguments.of(
            named(
                "counter name invalid",
                snapshot()
                    .setSharedCounters(
                        0,
                        CounterSet.newBuilder().setName("gpu-0-mem").putCounters("Memory", "1Gi"))
                    .build()),
            "shared counter set \"gpu-0-mem\": counter \"Memory\": name: a lowercase RFC 1123"
                + " label"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void refusals(InventorySnapshot snapshot, String expectedError) {
    var result = CONVERTER.convert(snapshot, Instant.EPOCH);
    assertThat(result.ok()).isFalse();
    assertThat(result.inventory()).isNull();
    assertThat(result.errors()).anySatisfy(e -> assertThat(e).startsWith(expectedError));
  }

  @Test
  void aValidSnapshotConvertsWithCanonicalQuantitiesAndHealth() {
    var result =
        CONVERTER.convert(
            snapshot()
                .addDevices(
                    Device.newBuilder()
                        .setName("gpu-1")
                        .putCapacity("memory", "81920Mi")
                        .setHealth(Health.UNHEALTHY)
                        .setHealthMessage("ecc")
                        .setAllowMultipleAllocations(true)
                        .addConsumesCounters(
                            CounterConsumption.newBuilder()
                                .setCounterSet("gpu-0-mem")
                                .putCounters("memory", "0.5Gi")))
                .build(),
            Instant.EPOCH);
    assertThat(result.errors()).isEmpty();
    var inventory = result.inventory();
    assertThat(inventory.driver()).isEqualTo("gpu.kdra.io");
    assertThat(inventory.sharedCounters())
        .singleElement()
        .satisfies(c -> assertThat(c.getName()).isEqualTo("gpu-0-mem"));
    var gpu0 = inventory.devices().get(0);
    assertThat(gpu0.healthy()).isTrue();
    assertThat(gpu0.device().getAttributes().get("driverVersion").getVersion())
        .isEqualTo("550.54.15");
    var gpu1 = inventory.devices().get(1);
    assertThat(gpu1.healthy()).isFalse();
    assertThat(gpu1.healthMessage()).isEqualTo("ecc");
    assertThat(gpu1.device().getAllowMultipleAllocations()).isTrue();
    assertThat(gpu1.device().getCapacity().get("memory").getValue().toString()).isEqualTo("80Gi");
    assertThat(
            gpu1.device()
                .getConsumesCounters()
                .get(0)
                .getCounters()
                .get("memory")
                .getValue()
                .toString())
        .isEqualTo("512Mi");
  }

  @Test
  void theNodeOperationsTheDevicesNeedNotHaveAreKept() {
    var declared = CONVERTER.convert(snapshot().addSkipNodeOperations("*").build(), Instant.EPOCH);
    var unsaid = CONVERTER.convert(snapshot().build(), Instant.EPOCH);
    assertThat(declared.errors()).isEmpty();
    assertThat(declared.inventory().skipNodeOperations()).containsExactly("*");
    assertThat(unsaid.inventory().skipNodeOperations()).isEmpty();
  }

  @Test
  void requestPoliciesBecomeTheCapacitiesPolicies() {
    var result =
        CONVERTER.convert(
            snapshot()
                .addDevices(
                    Device.newBuilder()
                        .setName("gpu-1")
                        .setAllowMultipleAllocations(true)
                        .putCapacity("shares", "8")
                        .putCapacity("memory", "80Gi")
                        .putRequestPolicies(
                            "shares",
                            CapacityRequestPolicy.newBuilder()
                                .setDefault("1")
                                .setValidRange(
                                    CapacityRequestPolicyRange.newBuilder()
                                        .setMin("1")
                                        .setMax("8")
                                        .setStep("1"))
                                .build())
                        .putRequestPolicies(
                            "memory",
                            CapacityRequestPolicy.newBuilder()
                                .setDefault("10Gi")
                                .addValidValues("10Gi")
                                .addValidValues("20Gi")
                                .build()))
                .build(),
            Instant.EPOCH);
    assertThat(result.errors()).isEmpty();
    var gpu1 = result.inventory().devices().get(1).device();
    var shares = gpu1.getCapacity().get("shares").getRequestPolicy();
    assertThat(shares.getDefault().toString()).isEqualTo("1");
    assertThat(shares.getValidRange().getMin().toString()).isEqualTo("1");
    assertThat(shares.getValidRange().getMax().toString()).isEqualTo("8");
    assertThat(shares.getValidRange().getStep().toString()).isEqualTo("1");
    var memory = gpu1.getCapacity().get("memory").getRequestPolicy();
    assertThat(memory.getValidValues())
        .extracting(Object::toString)
        .containsExactly("10Gi", "20Gi");
    assertThat(memory.getValidRange()).isNull();
  }

  @Test
  void aSnapshotOverTheDeviceCapIsRefusedNamingCountAndLimitBeforeItsDevicesAreRead() {
    SnapshotConverter capped = new SnapshotConverter(2, 3);
    var atCap = snapshot();
    for (int i = 1; i < 3; i++) {
      atCap.addDevices(device().setName("gpu-" + i));
    }
    assertThat(capped.convert(atCap.build(), Instant.EPOCH).errors()).isEmpty();

    // one device more, and an invalid one: only the count is reported
    var overCap = atCap.addDevices(device().setName("GPU_3"));
    var result = capped.convert(overCap.build(), Instant.EPOCH);
    assertThat(result.inventory()).isNull();
    assertThat(result.errors())
        .containsExactly(
            "node_name \"node-a\": 4 devices, at most 3 allowed per driver and node"
                + " (kdra.slice-publisher.max-devices-per-node)");
  }
}
