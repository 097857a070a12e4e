package io.kdra.core.cel;

import static io.kdra.core.cel.SelectorDevices.ENV;
import static io.kdra.core.cel.SelectorDevices.h100;
import static io.kdra.core.cel.SelectorDevices.smallGpu;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The DRA selector environment, with expected values worked out from upstream's semantics
 * (k8s.io/dynamic-resource-allocation/cel and the apiserver CEL libraries). Errors are {@link
 * SelectorErrorsTest}'s, cost limits {@link SelectorCostTest}'s.
 */
class DeviceSelectorEnvironmentTest {

  static Stream<Arguments> matching() {
    return Stream.of(
        // the facts sheet's example selectors (section 2.4)
        ok("driver equality", "device.driver == \"gpu.example.com\"", true, true),
        ok(
            "memory >= 40Gi",
            "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0",
            true,
            false),
        ok(
            "model in list",
            "device.attributes[\"gpu.example.com\"].model in [\"A100\", \"H100\"]",
            true,
            false),
        ok(
            "driver version compareTo",
            "device.attributes[\"gpu.example.com\"].driverVersion.compareTo(semver(\"550.54.0\")) >= 0",
            true,
            false),
        ok(
            "has() guard, absent on the small GPU",
            "has(device.attributes[\"gpu.example.com\"].migCapable) && device.attributes[\"gpu.example.com\"].migCapable",
            true,
            false),
        errorOnSmall(
            "cel.bind",
            "cel.bind(g, device.attributes[\"gpu.example.com\"], g.model == \"H100\" ? g.numaNode == 0 : g.numaNode == 1)",
            true),
        errorOnSmall(
            "standard attribute domain",
            "device.attributes[\"resource.kubernetes.io\"].pcieRoot == \"pci0000:40\"",
            true),
        ok(
            "memory range",
            "device.capacity[\"gpu.example.com\"].memory.isGreaterThan(quantity(\"16Gi\")) && device.capacity[\"gpu.example.com\"].memory.isLessThan(quantity(\"81Gi\"))",
            true,
            false),
        ok(
            "allowMultipleAllocations false when unset",
            "!device.allowMultipleAllocations",
            true,
            true),
        // unqualified names belong to the driver's domain; qualified ones to theirs
        errorOnSmall(
            "other domain", "device.attributes[\"other.example.com\"].family == \"accel\"", true),
        ok(
            "unknown domain is an empty map",
            "device.attributes[\"nosuch.example.com\"].size() == 0",
            true,
            true),
        ok(
            "in on unknown domain is false",
            "\"nosuch.example.com\" in device.attributes",
            false,
            false),
        ok("in on known domain", "\"gpu.example.com\" in device.attributes", true, true),
        ok(
            "has on unknown domain",
            "has(device.attributes[\"nosuch.example.com\"].model)",
            false,
            false),
        ok(
            "capacity of unknown domain is empty",
            "device.capacity[\"x.example.com\"].size() == 0",
            true,
            true),
        // cel-go 0.29 (1.37): an empty substring matches at the offset, clamped to the end
        ok(
            "indexOf an empty string past the end",
            "\"abc\".indexOf(\"\", 5) == 3 && \"abc\".lastIndexOf(\"\", 5) == 3",
            true,
            true),
        // quantity library
        ok("isQuantity", "isQuantity(\"1.5G\") && !isQuantity(\"1.5GB\")", true, true),
        ok(
            "isInteger",
            "quantity(\"500m\").isInteger() == false && quantity(\"2k\").isInteger()",
            true,
            true),
        ok("asInteger", "quantity(\"2k\").asInteger() == 2000", true, true),
        // upstream answers from resource.Quantity's internal form, not the value (GoQuantity)
        ok(
            "1000m is not an integer upstream",
            "!quantity(\"1000m\").isInteger() && quantity(\"1536Mi\").isInteger()",
            true,
            true),
        ok(
            "19 digits are an inf.Dec",
            "!quantity(\"9223372036854775807\").isInteger()",
            true,
            true),
        ok(
            "compareTo with an inf.Dec converts the receiver",
            "cel.bind(q, quantity(\"1\"), q.compareTo(quantity(\"1.5Gi\")) < 0 && !q.isInteger())",
            true,
            true),
        // since 1.37 add() and sub() work on a deep copy: the receiver stays as it was
        ok(
            "add() of an inf.Dec leaves the receiver",
            "cel.bind(q, quantity(\"1.5Gi\"), q.add(q) != q && q == quantity(\"1.5Gi\"))",
            true,
            true),
        ok(
            "sub() of an inf.Dec leaves the receiver",
            "cel.bind(q, quantity(\"1.5Gi\"), sign(q.sub(q)) == 0 && sign(q) == 1)",
            true,
            true),
        ok(
            "capacity is fresh per evaluation",
            "device.capacity[\"gpu.example.com\"].memory.isLessThan(quantity(\"1.5Ei\")) && !device.capacity[\"gpu.example.com\"].memory.isInteger()",
            true,
            true),
        ok("asApproximateFloat", "quantity(\"500m\").asApproximateFloat() == 0.5", true, true),
        ok(
            "sign is a global function",
            "sign(quantity(\"-1\")) == -1 && sign(quantity(\"0\")) == 0 && sign(quantity(\"1Ki\")) == 1",
            true,
            true),
        ok(
            "add quantity",
            "quantity(\"1Gi\").add(quantity(\"1Gi\")) == quantity(\"2Gi\")",
            true,
            true),
        ok("add int", "quantity(\"1k\").add(24).compareTo(quantity(\"1024\")) == 0", true, true),
        ok(
            "sub quantity",
            "device.capacity[\"gpu.example.com\"].memory.sub(quantity(\"64Gi\")).isGreaterThan(quantity(\"0\"))",
            true,
            false),
        ok("sub int", "sign(quantity(\"10\").sub(11)) == -1", true, true),
        ok(
            "binary vs decimal compare",
            "quantity(\"1Ki\").compareTo(quantity(\"1024\")) == 0 && quantity(\"1k\").isLessThan(quantity(\"1Ki\"))",
            true,
            true),
        errorOnSmall(
            "capacity is integral",
            "device.capacity[\"gpu.example.com\"].cores.asInteger() > 100",
            true),
        // semver library
        ok(
            "isSemver strict",
            "isSemver(\"1.2.3\") && !isSemver(\"v1.2.3\") && !isSemver(\"1.2\")",
            true,
            true),
        ok(
            "isSemver normalized",
            "isSemver(\"v1.2\", true) && isSemver(\"01.02.03\", true)",
            true,
            true),
        ok(
            "semver equality ignores build metadata",
            "semver(\"1.2.3+build\") == semver(\"1.2.3\") && semver(\"1.2.3\") != semver(\"1.2.4\")",
            true,
            true),
        ok("semver normalize", "semver(\"v1.2\", true) == semver(\"1.2.0\")", true, true),
        ok(
            "major minor patch",
            "semver(\"1.22.3\").major() == 1 && semver(\"1.22.3\").minor() == 22 && semver(\"1.22.3\").patch() == 3",
            true,
            true),
        ok(
            "semver precedence with pre-release",
            "semver(\"1.0.0-alpha\").isLessThan(semver(\"1.0.0\")) && semver(\"1.0.0-alpha.2\").isGreaterThan(semver(\"1.0.0-alpha.10\")) == false",
            true,
            true),
        ok(
            "version attribute isGreaterThan",
            "device.attributes[\"gpu.example.com\"].driverVersion.isGreaterThan(semver(\"535.0.0\"))",
            true,
            true),
        // strings, lists, sets extensions and macros
        ok(
            "strings lowerAscii",
            "device.attributes[\"gpu.example.com\"].model.lowerAscii() == \"h100\"",
            true,
            false),
        ok(
            "strings startsWith",
            "device.attributes[\"gpu.example.com\"].model.startsWith(\"H\")",
            true,
            false),
        ok("strings split", "\"a,b\".split(\",\").size() == 2", true, true),
        ok(
            "regex matches",
            "device.attributes[\"gpu.example.com\"].model.matches(\"^[HA]1[0-9]{2}$\")",
            true,
            false),
        ok("sets contains", "sets.contains([1, 2, 3], [2])", true, true),
        ok(
            "exists macro over domains",
            "device.attributes.exists(d, d == \"resource.kubernetes.io\")",
            true,
            false),
        ok(
            "all macro over the driver's attributes",
            "device.attributes[\"gpu.example.com\"].all(k, k.size() > 0)",
            true,
            true),
        // accepted by the API server, so they must compile and run here too
        ok(
            "optional field selection",
            "device.attributes[\"gpu.example.com\"].?productName.orValue(\"\") == \"\"",
            true,
            true),
        ok("optional.of", "optional.of(1).hasValue() && optional.of(1).value() == 1", true, true),
        ok(
            "string format",
            "\"%s-%d\".format([string(device.attributes[\"gpu.example.com\"].model), 1]) == \"H100-1\"",
            true,
            false),
        ok("Kubernetes lists sum", "[1, 2, 3].sum() == 6", true, true),
        ok(
            "a binding's value reads the variables of where it is bound",
            "cel.bind(x, 1, cel.bind(x, x + 1, cel.bind(x, x * 10, x))) == 20"
                + " && cel.bind(y, 5, cel.bind(x, y, [1].map(y, x))) == [5]",
            true,
            true),
        ok(
            "a repeated map key: the last value wins",
            "{1: \"a\", 1: \"b\"}[1] == \"b\"",
            true,
            true),
        ok(
            "an empty list of double sums to 0.0",
            "type([].sortBy(x, -x).sum()) == double && type([].sum()) == int",
            true,
            true),
        ok(
            "Go's durations and timestamps",
            "duration(\".5m\") == duration(\"30s\") && duration(\"1h30m\").getMilliseconds() == 5400000"
                + " && timestamp(\"2024-01-01T10:00:00Z\").getHours(\"02:00\") == 12"
                + " && string(timestamp(\"2024-01-01T10:00:00.500Z\")) == \"2024-01-01T10:00:00.5Z\"",
            true,
            true),
        ok(
            "Kubernetes lists min max indexOf",
            "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3 && [3, 1, 2].indexOf(2) == 2 && [1, 2].isSorted()",
            true,
            true),
        ok(
            "ip",
            "ip(\"10.0.0.1\").family() == 4 && cidr(\"10.0.0.0/8\").containsIP(ip(\"10.0.0.1\"))",
            true,
            true),
        ok("url", "url(\"https://example.com\").getHost() == \"example.com\"", true, true),
        // Go's net/url (GoUrl): a space in the path is accepted, an invalid query pair skipped
        ok(
            "url with a space",
            "url(\"https://h/a b?a=%zz&b=1\").getEscapedPath() == \"/a%20b\" && url(\"https://h/a b?a=%zz&b=1\").getQuery() == {\"b\": [\"1\"]}",
            true,
            true),
        ok(
            "urls equal by their text",
            "url(\"https://h/%62\") != url(\"https://h/b\") && url(\"https://h/b?\") != url(\"https://h/b\")",
            true,
            true),
        ok(
            "regex find",
            "\"a1b22\".find(\"[0-9]+\") == \"1\" && \"a1b22\".findAll(\"[0-9]+\") == [\"1\", \"22\"]",
            true,
            true),
        errorOnSmall(
            "lists functions on attribute values (any)",
            "[device.attributes[\"gpu.example.com\"].numaNode, device.attributes[\"gpu.example.com\"].numaNode].sum() == 0 && [device.attributes[\"gpu.example.com\"].model, device.attributes[\"gpu.example.com\"].family].min() == \"H100\"",
            true),
        ok(
            "quantity equality",
            "quantity(\"1Gi\") == quantity(\"1024Mi\") && quantity(\"1\").add(1) == quantity(\"2\") && quantity(\"1\") != quantity(\"2\")",
            true,
            true),
        ok(
            "sortBy",
            "[3, 1, 2].sortBy(x, -x) == [3, 2, 1] && [\"bb\", \"a\"].sortBy(s, s.size()) == [\"a\", \"bb\"]",
            true,
            true),
        ok("unwrapOpt", "[optional.of(1), optional.none()].unwrapOpt() == [1]", true, true),
        // overloads tried in cel-go's order: -x of a free element type binds it to double first
        ok("sortBy of an empty list keyed by -x", "[].sortBy(x, -x) + [1.5] == [1.5]", true, true),
        ok(
            "x + x over an empty list binds bytes first, as cel-go's order has it",
            "[].map(x, x + x) + [b\"a\"] == [b\"a\"]",
            true,
            true),
        ok("int(duration), in nanoseconds", "int(duration(\"1.5s\")) == 1500000000", true, true),
        // attribute values are of type dyn, as upstream declares them since 1.37 (any before): a
        // list of them indexed, or a choice of them, is dyn too, which upstream accepts as a result
        errorOnSmall(
            "an element of a list of attribute values as result",
            "[device.attributes[\"gpu.example.com\"].migCapable, device.attributes[\"gpu.example.com\"].migCapable][0]",
            true),
        errorOnSmall(
            "a choice of attribute values as result",
            "device.attributes[\"gpu.example.com\"].numaNode == 0 ? device.attributes[\"gpu.example.com\"].migCapable : false",
            true),
        ok(
            "format of a bare attribute (dyn: checked at runtime)",
            "\"%s/%s\".format([device.attributes[\"gpu.example.com\"].model, device.attributes[\"gpu.example.com\"].driverVersion.major()]) == \"H100/550\"",
            true,
            false),
        ok(
            "an attribute beside a dyn() in a list",
            "[device.attributes[\"gpu.example.com\"].model, dyn(1)].size() == 2",
            true,
            true),
        ok(
            "an optional attribute's orValue() with a dyn default as result",
            "device.attributes[\"gpu.example.com\"].?migCapable.orValue(dyn(true))",
            true,
            true),
        // includes() of the 1.37 lists library: membership in a list, else equality
        ok(
            "includes on a scalar attribute",
            "device.attributes[\"gpu.example.com\"].model.includes(\"H100\")",
            true,
            false),
        ok(
            "includes on lists, numbers compared across types",
            "[1, 2].includes(2.0) && ![\"a\"].includes(1) && lists.range(40).includes(39)",
            true,
            true),
        ok("strings.quote", "strings.quote(\"a\") == \"\\\"a\\\"\"", true, true),
        ok(
            "heterogeneous numeric comparison",
            "device.attributes[\"gpu.example.com\"].driverVersion.major() > 500.0",
            true,
            true),
        ok(
            "double(string) as Go's ParseFloat",
            "double(\"inf\") > 1.0 && double(\"1_000\") == 1000.0 && double(\"0x1p-2\") == 0.25",
            true,
            true),
        ok(
            "sort() by code points, of a list of dyn too",
            "[\"\\U0001F642\", \"\\uffff\"].sort()[0] == \"\\uffff\" && [dyn(2), dyn(1)].sort() == [1, 2]",
            true,
            true),
        ok(
            "a NaN is neither less nor greater in list functions",
            "[1.0, 0.0 / 0.0].isSorted() && [1.0, 0.0 / 0.0].max() == 1.0",
            true,
            true),
        // cel-go plans x in [] as the constant false (OptOptimize): x is never evaluated
        ok(
            "missing attribute in an empty list literal is false",
            "device.attributes[\"gpu.example.com\"].nosuch in []",
            false,
            false),
        ok(
            "negated empty-list membership is true",
            "!(device.attributes[\"gpu.example.com\"].nosuch in [])",
            true,
            true),
        ok(
            "empty-list membership inside a macro",
            "[1, 2].exists(x, device.attributes[\"gpu.example.com\"].nosuch in [])",
            false,
            false),
        ok(
            "Kubernetes named formats",
            "format.dns1123Label().validate(\"a.b\") == optional.of([\"must not contain dots\"]) && format.named(\"uri\") == optional.of(format.uri())",
            true,
            true));
  }

  /** The outcome on the small GPU, which lacks most attributes: a missing key is an error. */
  enum Small {
    TRUE,
    FALSE,
    ERROR
  }

  private static Arguments ok(String name, String expression, boolean onH100, boolean onSmall) {
    return arguments(named(name, expression), onH100, onSmall ? Small.TRUE : Small.FALSE);
  }

  private static Arguments errorOnSmall(String name, String expression, boolean onH100) {
    return arguments(named(name, expression), onH100, Small.ERROR);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("matching")
  void evaluatesAsUpstream(String expression, boolean onH100, Small onSmall) {
    CompiledSelector selector = ENV.compile(expression);
    assertThat(selector.matches(h100())).isEqualTo(onH100);
    if (onSmall == Small.ERROR) {
      assertThatThrownBy(() -> selector.matches(smallGpu()))
          .isInstanceOfSatisfying(
              CelSelectorException.class, e -> assertThat(e.reason()).startsWith("no such key"));
    } else {
      assertThat(selector.matches(smallGpu())).isEqualTo(onSmall == Small.TRUE);
    }
  }

  @Test
  void allowMultipleAllocationsIsUndeclaredWithoutConsumableCapacity() {
    DeviceSelectorEnvironment withoutFeature = DeviceSelectorEnvironment.create(false);
    assertThatThrownBy(() -> withoutFeature.compile("device.allowMultipleAllocations"))
        .hasMessageContaining("undefined field 'allowMultipleAllocations'");
  }

  @Test
  void compiledProgramsAreCachedByExpressionText() {
    DeviceSelectorEnvironment env = DeviceSelectorEnvironment.create();
    CompiledSelector first = env.compile("device.driver == \"a\"");
    assertThat(env.compile("device.driver == \"a\"")).isSameAs(first);
    env.compile("device.driver == \"b\"");
    assertThat(env.cachedPrograms()).isEqualTo(2);
  }
}
