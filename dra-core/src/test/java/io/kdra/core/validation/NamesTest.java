package io.kdra.core.validation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class NamesTest {

  record Case(Function<String, List<String>> check, String input, List<String> expected) {}

  private static final String LABEL = Names.LABEL_ERROR;
  private static final String SUBDOMAIN = Names.SUBDOMAIN_ERROR;
  private static final String C_ID = Names.C_IDENTIFIER_ERROR;
  private static final String QNAME = Names.QUALIFIED_NAME_ERROR;

  private static Named<Case> ok(String name, Function<String, List<String>> check, String in) {
    return Named.of(name, new Case(check, in, List.of()));
  }

  private static Named<Case> bad(
      String name, Function<String, List<String>> check, String in, String... expected) {
    return Named.of(name, new Case(check, in, List.of(expected)));
  }

  static Stream<Named<Case>> cases() {
    return Stream.of(
        ok("label: simple", Names::dns1123Label, "gpu-0"),
        ok("label: 63 chars", Names::dns1123Label, "a".repeat(63)),
        bad(
            "label: 64 chars",
            Names::dns1123Label,
            "a".repeat(64),
            "must be no more than 63 characters"),
        bad("label: upper case", Names::dns1123Label, "Gpu", LABEL),
        bad("label: dot", Names::dns1123Label, "a.b", LABEL),
        bad("label: trailing dash", Names::dns1123Label, "a-", LABEL),
        bad("label: empty", Names::dns1123Label, "", LABEL),
        bad("label: null is empty", Names::dns1123Label, null, LABEL),
        ok("subdomain: dotted", Names::dns1123Subdomain, "gpu.example.com"),
        ok("subdomain: 253 chars", Names::dns1123Subdomain, ("a".repeat(62) + ".").repeat(4) + "a"),
        bad(
            "subdomain: 254 chars",
            Names::dns1123Subdomain,
            "a".repeat(254),
            "must be no more than 253 characters"),
        bad("subdomain: empty label", Names::dns1123Subdomain, "a..b", SUBDOMAIN),
        bad("subdomain: underscore", Names::dns1123Subdomain, "a_b", SUBDOMAIN),
        ok("driver: domain", Names::driverName, "gpu.example.com"),
        ok("driver: upper case passes after lower-casing", Names::driverName, "GPU.Example.com"),
        bad("driver: empty", Names::driverName, "", "must be non-empty"),
        bad(
            "driver: 64 chars",
            Names::driverName,
            "a".repeat(64),
            "must be no more than 63 characters"),
        bad("driver: slash", Names::driverName, "gpu/example", SUBDOMAIN),
        ok("pool: one part", Names::poolName, "node-a"),
        ok("pool: several parts", Names::poolName, "rack-1/node-a.example"),
        bad("pool: empty", Names::poolName, "", "must be non-empty"),
        bad("pool: empty part", Names::poolName, "a//b", SUBDOMAIN),
        bad("pool: trailing slash", Names::poolName, "a/", SUBDOMAIN),
        bad(
            "pool: 254 chars",
            Names::poolName,
            "a".repeat(200) + "/" + "b".repeat(53),
            "must be no more than 253 characters"),
        ok("device: label", Names::deviceName, "gpu-7"),
        bad("device: subdomain is not a label", Names::deviceName, "gpu.7", LABEL),
        ok("c identifier: mixed", Names::cIdentifier, "_Model_2"),
        ok("c identifier: 32 chars", Names::cIdentifier, "a".repeat(32)),
        bad(
            "c identifier: 33 chars",
            Names::cIdentifier,
            "a".repeat(33),
            "must be no more than 32 characters"),
        bad("c identifier: leading digit", Names::cIdentifier, "2model", C_ID),
        bad("c identifier: dash", Names::cIdentifier, "my-model", C_ID),
        ok("qualified: bare id", Names::qualifiedName, "model"),
        ok("qualified: domain/id", Names::qualifiedName, "gpu.example.com/model"),
        bad(
            "qualified: two slashes",
            Names::qualifiedName,
            "a.com/b/c",
            "must not contain more than one slash"),
        bad(
            "qualified: empty domain",
            Names::qualifiedName,
            "/model",
            "the domain must not be empty"),
        bad(
            "qualified: empty id",
            Names::qualifiedName,
            "gpu.example.com/",
            "the name must not be empty"),
        bad(
            "qualified: domain too long",
            Names::qualifiedName,
            "a".repeat(64) + "/id",
            "must be no more than 63 characters"),
        bad("qualified: bad id", Names::qualifiedName, "gpu.example.com/my-id", C_ID),
        ok("fully qualified: domain/id", Names::fullyQualifiedName, "gpu.example.com/model"),
        bad(
            "fully qualified: no domain",
            Names::fullyQualifiedName,
            "model",
            "a fully qualified name must be a domain and a name separated by a slash"),
        ok("label name: plain", Names::labelName, "Dead_Pixels.2"),
        ok("label name: prefixed", Names::labelName, "gpu.example.com/unhealthy"),
        bad(
            "label name: empty",
            Names::labelName,
            "",
            "name part must be non-empty",
            "name part " + QNAME),
        bad("label name: empty prefix", Names::labelName, "/x", "prefix part must be non-empty"),
        bad(
            "label name: bad prefix",
            Names::labelName,
            "Example.com/x",
            "prefix part " + SUBDOMAIN),
        bad(
            "label name: 64-char name",
            Names::labelName,
            "a".repeat(64),
            "name part must be no more than 63 characters"),
        bad("label name: trailing dot", Names::labelName, "a.", "name part " + QNAME),
        bad(
            "label name: two slashes",
            Names::labelName,
            "a/b/c",
            "a qualified name "
                + QNAME
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
        ok("label value: empty", Names::labelValue, ""),
        ok("label value: mixed", Names::labelValue, "My_value.1"),
        bad("label value: space", Names::labelValue, "a b", Names.LABEL_VALUE_ERROR),
        ok("version: full semver", Names::versionValue, "1.2.3-rc.1+build.5"),
        bad("version: leading v", Names::versionValue, "v1.2.3", Names.SEMVER_ERROR),
        bad("version: two parts", Names::versionValue, "1.2", Names.SEMVER_ERROR),
        bad("version: leading zero", Names::versionValue, "1.02.3", Names.SEMVER_ERROR),
        bad(
            "version: numeric pre-release with leading zero",
            Names::versionValue,
            "1.2.3-01",
            Names.SEMVER_ERROR),
        bad(
            "version: 65 chars",
            Names::versionValue,
            "1.2.3-" + "a".repeat(59),
            "must be no more than 64 characters"),
        ok("string: 64 chars", Names::attributeString, "x".repeat(64)),
        bad(
            "string: 65 chars",
            Names::attributeString,
            "x".repeat(65),
            "must be no more than 64 characters"),
        bad(
            "string: 33 two-byte chars are 66 bytes",
            Names::attributeString,
            "é".repeat(33),
            "must be no more than 64 characters"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void check(Case c) {
    assertThat(c.check().apply(c.input())).containsExactlyElementsOf(c.expected());
  }
}
