package io.kdra.core.alloc;

import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.firstAvailable;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static io.kdra.core.testing.AllocFixtures.sub;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.model.NewerFields;
import io.kdra.core.model.NewerFields.DerivedAttribute;
import io.kdra.core.testing.Scenario;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code derivedAttributes} of requests (DRADerivedAttributes, alpha in 1.37), decided as
 * upstream's experimental allocator: the cases of its allocator_testing.go ("derived-attributes*"),
 * same devices and expected results, and what its scalar-only constraints do with list results.
 */
class DerivedAttributesTest {

  static final String A = "a.example.com";
  static final String B = "b.example.com";
  static final AllocatorFeatures ON = AllocatorFeatures.defaults().withDerivedAttributes(true);

  /** Driver A's devices (device2 numa-0 before device1 numa-1), driver B's (numa-1, numa-2). */
  static Scenario numa() {
    return Scenario.of(
            slice(
                    "s1",
                    "node-a",
                    device("device2").withString("numa", "numa-0").build(),
                    device("device1").withString("numa", "numa-1").build())
                .withDriver(A)
                .withPool("pool-1", 0, 1)
                .build(),
            slice(
                    "s2",
                    "node-a",
                    device("device3").withString("numaNode", "numa-1").build(),
                    device("device4").withString("numaNode", "numa-2").build())
                .withDriver(B)
                .withPool("pool-2", 0, 1)
                .build())
        .withClasses(
            deviceClass("class-a", "device.driver == '" + A + "'"),
            deviceClass("class-b", "device.driver == '" + B + "'"))
        .withFeatures(ON);
  }

  static ResourceClaim numaClaim() {
    return claim(
            "c",
            request("r0", "class-a")
                .withDerived("derived/sharedNumaNode", "device.attributes['" + A + "'].numa")
                .build(),
            request("r1", "class-b")
                .withDerived("derived/sharedNumaNode", "device.attributes['" + B + "'].numaNode")
                .build())
        .withConstraint("derived/sharedNumaNode", "r0", "r1")
        .build();
  }

  static DeviceSubRequest derivedSub(String name, String attribute, String expression) {
    DeviceSubRequest s = sub(name, "class-a", 1);
    NewerFields.setDerivedAttributes(s, List.of(new DerivedAttribute(attribute, expression)));
    return s;
  }

  /** One device per driver: A's with foo=A and bar=B, B's with baz=B. */
  static Scenario fooBar() {
    return Scenario.of(
            slice(
                    "s1",
                    "node-a",
                    device("device1").withString("foo", "A").withString("bar", "B").build())
                .withDriver(A)
                .withPool("pool-1", 0, 1)
                .build(),
            slice("s2", "node-a", device("device2").withString("baz", "B").build())
                .withDriver(B)
                .withPool("pool-2", 0, 1)
                .build())
        .withClasses(
            deviceClass("class-a", "device.driver == '" + A + "'"),
            deviceClass("class-b", "device.driver == '" + B + "'"))
        .withFeatures(ON);
  }

  /** Two devices of driver A with attribute {@code attr} set as given. */
  static Scenario pair(
      io.kdra.core.testing.AllocFixtures.DeviceWrapper first,
      io.kdra.core.testing.AllocFixtures.DeviceWrapper second) {
    return Scenario.of(
            slice("s1", "node-a", first.build(), second.build())
                .withDriver(A)
                .withPool("pool-1", 0, 1)
                .build())
        .withClasses(deviceClass("class-a"))
        .withFeatures(ON);
  }

  static Arguments tc(String name, Scenario s, ResourceClaim claim, String expected) {
    return arguments(named(name, s), claim, expected);
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        tc(
            "a virtual key across drivers: backtracks past the first device",
            numa(),
            numaClaim(),
            "r0=a.example.com/pool-1/device1, r1=b.example.com/pool-2/device3"),
        tc(
            "subrequests derive differently: the second alternative matches",
            fooBar().withFeatures(ON),
            claim(
                    "c",
                    firstAvailable(
                        "r0",
                        derivedSub("s0", "derived/match", "device.attributes['" + A + "'].foo"),
                        derivedSub("s1", "derived/match", "device.attributes['" + A + "'].bar")),
                    request("r1", "class-b")
                        .withDerived("derived/match", "device.attributes['" + B + "'].baz")
                        .build())
                .withConstraint("derived/match", "r0", "r1")
                .build(),
            "r0/s1=a.example.com/pool-1/device1, r1=b.example.com/pool-2/device2"),
        tc(
            "a derived attribute shadows the device's own, for its request only",
            pair(
                device("device1").withString("myAttr", "value-1"),
                device("device2").withString("myAttr", "value-2")),
            claim(
                    "c",
                    request("r0", "class-a").withDerived(A + "/myAttr", "'value-2'").build(),
                    request("r1", "class-a").build())
                .withConstraint(A + "/myAttr", "r0", "r1")
                .build(),
            "r0=a.example.com/pool-1/device1, r1=a.example.com/pool-1/device2"),
        tc(
            "a runtime error fails the allocation",
            pair(device("device1").withString("existingAttr", "yes"), device("device2")),
            claim(
                    "c",
                    request("r0", "class-a")
                        .withDerived(
                            "derived/missing", "device.attributes['" + A + "'].missingAttr")
                        .build())
                .withConstraint("derived/missing", "r0")
                .build(),
            "!no such key: missingAttr"),
        tc(
            "values of different types do not match",
            pair(
                device("device1").withString("static", "value"),
                device("device2").withInt("static", 1)),
            claim(
                    "c",
                    request("r0", "class-a")
                        .withCount(2)
                        .withDerived("derived/myAttr", "device.attributes['" + A + "'].static")
                        .build())
                .withConstraint("derived/myAttr", "r0")
                .build(),
            "!"),
        tc(
            "gate off: a request with derived attributes is refused",
            numa().withFeatures(AllocatorFeatures.defaults()),
            numaClaim(),
            "!cannot handle request with derived attributes, the feature is disabled"),
        tc(
            "a list result matches nothing after it (scalar constraints)",
            pair(device("device1"), device("device2")),
            claim(
                    "c",
                    request("r0", "class-a")
                        .withCount(2)
                        .withDerived("derived/l", "[1, 2]")
                        .build())
                .withConstraint("derived/l", "r0")
                .build(),
            "!"),
        tc(
            "a list result is a first value",
            pair(device("device1"), device("device2")),
            claim("c", request("r0", "class-a").withDerived("derived/l", "[1, 2]").build())
                .withConstraint("derived/l", "r0")
                .build(),
            "r0=a.example.com/pool-1/device1"),
        tc(
            "distinct: a list only while there is no other value",
            pair(device("device1").withInt("n", 1), device("device2").withInt("n", 2)),
            claim(
                    "c",
                    request("r0", "class-a")
                        .withDerived("derived/n", "[device.attributes['" + A + "'].n]")
                        .build(),
                    request("r1", "class-a").build())
                .withDistinct("derived/n")
                .build(),
            "!"),
        tc(
            "a derived value of a type that is not an attribute fails to compile",
            pair(device("device1"), device("device2")),
            claim("c", request("r0", "class-a").withDerived("derived/d", "1.5").build())
                .withConstraint("derived/d", "r0")
                .build(),
            "!must evaluate to a primitive scalar"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void allocatesAsUpstreamsExperimentalAllocator(Scenario s, ResourceClaim claim, String expected) {
    List<String> actual = Scenario.brief(s.allocate(node("node-a"), claim));
    if (expected.startsWith("!")) {
      assertThat(actual.get(0)).startsWith("!").contains(expected.substring(1));
    } else {
      assertThat(actual).containsExactly(expected);
    }
  }
}
