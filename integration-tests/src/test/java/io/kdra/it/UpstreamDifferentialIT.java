package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.golden.AllocationDecision;
import io.kdra.core.golden.AllocationGolden;
import io.kdra.core.golden.GoldenFiles;
import io.kdra.core.testing.AllocationChecker;
import io.kdra.core.testing.GeneratedScenario;
import io.kdra.core.testing.ScenarioGenerator;
import io.kdra.core.testing.ScenarioGenerator.Profile;
import io.kdra.it.upstream.UpstreamAlloc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Differential correctness against upstream's allocator: for seeded random scenarios ({@link
 * ScenarioGenerator}), {@code bin/dra-alloc} (in process) and {@code dra-alloc-upstream}
 * (upstream's {@code k8s.io/dynamic-resource-allocation/structured}, v0.37.2) read the same input
 * and must agree on which claims are allocated; every allocation of ours must pass the {@link
 * AllocationChecker} (upstream's too, which keeps the checker honest). Where both allocate, the
 * allocations must be the same too, share IDs aside: upstream's first fit is deterministic for a
 * given input (see "Differential testing against upstream" in docs/dev/oracles.md).
 *
 * <p>All five generator profiles run: {@value #DEFAULT_SCENARIOS} basic, {@value #DEFAULT_EXTENDED}
 * extended, {@value #DEFAULT_SHARED} shared, {@value #DEFAULT_ALPHA} alpha and {@value
 * #DEFAULT_NEWER} newer scenarios (the alpha one with its feature gates on in both programs, the
 * newer one with each scenario's own). {@code -Dprofile=basic}, {@code extended}, {@code shared},
 * {@code alpha} or {@code newer} runs only one, {@code -Dscenarios=N} sets how many of each and
 * {@code -Dseed=S} the first seed (default 1; scenario i uses seed S+i). A failing scenario's input
 * stays in {@code target/differential/seed-S.yaml} (other profiles: {@code <profile>-seed-S.yaml})
 * for {@code bin/dra-alloc}; the others are deleted. No control plane needed.
 */
class UpstreamDifferentialIT {

  /** 37 s within a full verify on two shared cores (up to three minutes under heavy load). */
  static final int DEFAULT_SCENARIOS = 300;

  /** The extended profile's scenarios in the build. */
  static final int DEFAULT_EXTENDED = 200;

  /** The shared profile's scenarios in the build. */
  static final int DEFAULT_SHARED = 200;

  /** The alpha profile's scenarios in the build. */
  static final int DEFAULT_ALPHA = 200;

  /** The newer profile's scenarios in the build. */
  static final int DEFAULT_NEWER = 200;

  static final Path OUT = Path.of("target", "differential");
  static final String OURS_INVALID = "invalid allocation of ours: ";
  static final String UPSTREAM_INVALID = "upstream's allocation fails the checker: ";
  static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  @Test
  void agreesWithUpstreamOnGeneratedScenarios() throws IOException {
    run(Profile.BASIC, DEFAULT_SCENARIOS);
  }

  /**
   * The extended profile: adminAccess, binding conditions, per-device node selection, pods with
   * node constraints, NoExecute tolerations.
   */
  @Test
  void agreesWithUpstreamOnExtendedScenarios() throws IOException {
    run(Profile.EXTENDED, DEFAULT_EXTENDED);
  }

  /**
   * The shared profile: the extended scenarios plus pods that share claims and use claims allocated
   * before the run (their node selectors must restrict the pods), and vGPUs' fractional capacity
   * ranges (DRAFractionalCapacityRange, beta and on in 1.37).
   */
  @Test
  void agreesWithUpstreamOnSharedScenarios() throws IOException {
    run(Profile.SHARED, DEFAULT_SHARED);
  }

  /**
   * The alpha profile: the extended scenarios plus the 1.37 alpha fields (compatibilityGroups,
   * derivedAttributes), both allocators with DRADerivedAttributes and DRADeviceCompatibilityGroups
   * on (upstream then runs its experimental allocator, as kube-scheduler does).
   */
  @Test
  void agreesWithUpstreamOnAlphaScenarios() throws IOException {
    run(Profile.ALPHA, DEFAULT_ALPHA);
  }

  /**
   * The newer profile: the extended scenarios plus the other 1.37 fields (skipNodeOperations with
   * nodes that declare DRAOptionalNodeOperations or not, partitionTypeAttribute,
   * nodeAllocatableResources), each seed with its own gates: DRAOptionalNodeOperations on, off
   * beside another alpha gate (upstream's experimental allocator), or every alpha gate off
   * (incubating).
   */
  @Test
  void agreesWithUpstreamOnNewerScenarios() throws IOException {
    run(Profile.NEWER, DEFAULT_NEWER);
  }

  void run(Profile profile, int defaultScenarios) throws IOException {
    String only = System.getProperty("profile", "");
    Assumptions.assumeTrue(only.isBlank() || Profile.of(only) == profile, "-Dprofile=" + only);
    Path binary = UpstreamAlloc.binary();
    Assumptions.assumeTrue(
        Files.isExecutable(binary),
        "dra-alloc-upstream not found at "
            + binary
            + ": build it with integration-tests/scripts/build-upstream-alloc.sh (the "
            + "pre-integration-test phase does), or point -Dkdra.upstream.alloc at it");
    int scenarios = Integer.getInteger("scenarios", defaultScenarios);
    long first = Long.getLong("seed", 1);
    String prefix =
        profile == Profile.BASIC ? "" : profile.name().toLowerCase(java.util.Locale.ROOT) + "-";
    Files.createDirectories(OUT);
    List<String> problems = new ArrayList<>();
    List<Long> failing = new ArrayList<>();
    long oursNanos = 0;
    long upstreamNanos = 0;
    int allocatedByBoth = 0;
    Map<String, Integer> shapes = new TreeMap<>();
    int failedInBoth = 0;
    int claims = 0;
    List<ObjectNode> live = new ArrayList<>();
    long start = System.nanoTime();
    for (long seed = first; seed < first + scenarios; seed++) {
      GeneratedScenario s = ScenarioGenerator.generate(seed, profile);
      Path file = OUT.resolve(prefix + "seed-" + seed + ".yaml");
      Files.writeString(file, s.yaml());
      List<String> args = new ArrayList<>(List.of("-o", "json"));
      args.addAll(s.gateArgs());
      args.add(file.toString());
      long t0 = System.nanoTime();
      AllocationDecision ours = decide(UpstreamAlloc.kdra(args));
      long t1 = System.nanoTime();
      AllocationDecision upstream = decide(UpstreamAlloc.upstream(args));
      oursNanos += t1 - t0;
      upstreamNanos += System.nanoTime() - t1;
      List<String> found = new ArrayList<>(compare(s, ours, upstream));
      live.add(
          AllocationGolden.line(profile, s, upstream.exit(), upstream.claims(), upstream.err()));
      for (String k : ours.claims().keySet()) {
        claims++;
        boolean a = ours.allocated().contains(k);
        boolean b = upstream.allocated().contains(k);
        if (a && b) {
          allocatedByBoth++;
          shapes(ours.claims().get(k), s).forEach(x -> shapes.merge(x, 1, Integer::sum));
        } else if (!a && !b) {
          failedInBoth++;
        }
      }
      if (found.isEmpty()) {
        Files.delete(file);
      } else {
        failing.add(seed);
        for (String f : found) {
          problems.add("seed " + seed + ": " + f);
        }
        problems.add(
            "seed "
                + seed
                + ": replay with bin/dra-alloc -o summary "
                + (s.featureGates().isEmpty() ? "" : "--feature-gates=" + s.featureGates() + " ")
                + Path.of("integration-tests").resolve(file)
                + ", or -Dit.test="
                + getClass().getSimpleName()
                + " -Dprofile="
                + profile.name().toLowerCase(java.util.Locale.ROOT)
                + " -Dseed="
                + seed
                + " -Dscenarios=1");
      }
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    System.out.printf(
        "differential (%s): %d scenarios from seed %d, %d pending claims: %d "
            + "allocated by both, %d by neither; failing scenarios %s; %d ms (dra-alloc in process "
            + "%d ms, dra-alloc-upstream processes %d ms)%n",
        profile.name().toLowerCase(java.util.Locale.ROOT),
        scenarios,
        first,
        claims,
        allocatedByBoth,
        failedInBoth,
        failing,
        millis,
        oursNanos / 1_000_000,
        upstreamNanos / 1_000_000);
    if (profile != Profile.BASIC) {
      System.out.println("  claims allocated by both, by shape: " + shapes);
    }
    assertThat(problems).as("disagreements with upstream and invalid allocations").isEmpty();
    assertGoldenIsCurrent(profile, first, scenarios, live);
  }

  /**
   * The golden file of the profile (dra-core's test resources) must say what the live oracle says
   * for every seed both cover; with {@code -Dkdra.golden.write=true} (seeds from 1) it is rewritten
   * from this run instead.
   */
  static void assertGoldenIsCurrent(
      Profile profile, long first, int scenarios, List<ObjectNode> live) {
    String name = AllocationGolden.file(profile);
    JsonNode oracle = UpstreamAlloc.version();
    if (GoldenFiles.writing()) {
      assertThat(first).as("golden scenarios start at seed 1").isEqualTo(1);
      Path written =
          GoldenFiles.writeSource(
              name, AllocationGolden.header(profile, first, scenarios, oracle), live);
      System.out.println("golden allocations written: " + written);
      return;
    }
    GoldenFiles.Content golden = GoldenFiles.readSource(name);
    assertThat(golden)
        .as("golden file %s; write it with %s", name, GoldenFiles.REGENERATE)
        .isNotNull();
    // the header as the golden file's seeds would have it: this run may cover other seeds
    ObjectNode header =
        AllocationGolden.header(
            profile,
            golden.header().path("firstSeed").asLong(),
            golden.header().path("scenarios").asInt(),
            oracle);
    assertThat(GoldenFiles.staleness(golden, new GoldenFiles.Content(header, live), "seed", 5))
        .as(
            "dra-core's golden %s is stale against the live oracle: regenerate it with %s",
            name, GoldenFiles.REGENERATE)
        .isEmpty();
  }

  /**
   * Upstream 1.36 kept one {@code distinctAttribute} value per request and allocated devices that
   * share it (differential seed 36, minimised); 1.37 keeps every value, as we always did, and both
   * refuse the claim. Pinned so that a regression on either side shows up.
   */
  @Test
  void distinctAttributeComparesEveryDeviceOfARequest() throws IOException {
    Path binary = UpstreamAlloc.binary();
    Assumptions.assumeTrue(Files.isExecutable(binary), "dra-alloc-upstream not found at " + binary);
    List<String> args =
        List.of(
            "-o",
            "json",
            Path.of("src/test/resources/differential/distinct-attribute-per-request.yaml")
                .toString());
    AllocationDecision upstream = decide(UpstreamAlloc.upstream(args));
    AllocationDecision ours = decide(UpstreamAlloc.kdra(args));
    assertThat(upstream.allocated()).as("g0 and g2 share pci0: upstream").isEmpty();
    assertThat(ours.allocated()).as("g0 and g2 share pci0: ours").isEmpty();
    assertThat(ours.err())
        .contains(
            "constraint distinctAttribute resource.kubernetes.io/"
                + "pcieRoot (all requests) cannot be satisfied");
  }

  /**
   * The extended profile's shapes in one allocated claim, so that a run shows that they were
   * allocated and compared, not only generated.
   */
  static List<String> shapes(ResourceClaim c, GeneratedScenario s) {
    List<String> out = new ArrayList<>();
    var results = c.getStatus().getAllocation().getDevices().getResults();
    if (results.stream().anyMatch(r -> Boolean.TRUE.equals(r.getAdminAccess()))) {
      out.add("adminAccess");
    }
    if (results.stream()
        .anyMatch(r -> r.getBindingConditions() != null && !r.getBindingConditions().isEmpty())) {
      out.add("bindingConditions");
    }
    if (results.stream().anyMatch(r -> "attach".equals(r.getPool()))) {
      out.add("perDeviceNodeSelection");
    }
    if (results.stream()
        .anyMatch(
            r ->
                r.getTolerations() != null
                    && r.getTolerations().stream()
                        .anyMatch(
                            t ->
                                t.getTolerationSeconds() != null
                                    || "NoExecute".equals(t.getEffect())))) {
      out.add("NoExecute toleration");
    }
    if (c.getSpec().getDevices().getRequests().stream()
        .anyMatch(
            r ->
                (r.getExactly() != null
                        && !io.kdra.core.model.NewerFields.derivedAttributes(r.getExactly())
                            .isEmpty())
                    || r.getFirstAvailable().stream()
                        .anyMatch(
                            sub ->
                                !io.kdra.core.model.NewerFields.derivedAttributes(sub)
                                    .isEmpty()))) {
      out.add("derivedAttributes");
    }
    if (results.stream()
        .anyMatch(
            r ->
                s.slices().stream()
                    .filter(x -> x.getSpec().getDevices() != null)
                    .flatMap(x -> x.getSpec().getDevices().stream())
                    .filter(
                        d -> d.getName().equals(r.getDevice()) && d.getConsumesCounters() != null)
                    .flatMap(d -> d.getConsumesCounters().stream())
                    .anyMatch(
                        k -> !io.kdra.core.model.NewerFields.compatibilityGroups(k).isEmpty()))) {
      out.add("compatibilityGroups");
    }
    String name = c.getMetadata().getName();
    boolean placed =
        s.pods().stream()
            .anyMatch(
                p -> {
                  var spec = p.getSpec();
                  boolean constrained =
                      (spec.getNodeName() != null && !spec.getNodeName().isEmpty())
                          || (spec.getNodeSelector() != null && !spec.getNodeSelector().isEmpty())
                          || spec.getAffinity() != null;
                  return constrained
                      && spec.getResourceClaims().stream()
                          .anyMatch(
                              r ->
                                  name.equals(r.getResourceClaimName())
                                      || name.equals(
                                          p.getMetadata().getName() + "-" + r.getName()));
                });
    if (placed) {
      out.add("pod with node constraints");
    }
    String key = "default/" + name;
    List<io.fabric8.kubernetes.api.model.Pod> users =
        s.pods().stream()
            .filter(
                p ->
                    p.getSpec().getResourceClaims().stream()
                        .anyMatch(
                            r ->
                                name.equals(r.getResourceClaimName())
                                    || name.equals(p.getMetadata().getName() + "-" + r.getName())))
            .toList();
    if (users.size() > 1) {
      out.add("shared by pods");
    }
    java.util.Set<String> before = new java.util.HashSet<>();
    s.allocatedClaims().forEach(a -> before.add("default/" + a.getMetadata().getName()));
    if (!before.contains(key)
        && users.stream()
            .anyMatch(
                p ->
                    p.getSpec().getResourceClaims().stream()
                        .anyMatch(
                            r ->
                                r.getResourceClaimName() != null
                                    && before.contains("default/" + r.getResourceClaimName())))) {
      out.add("beside a claim allocated before");
    }
    return out;
  }

  /** Agreement with upstream (AllocationDecision); validity of both sides' allocations. */
  static List<String> compare(
      GeneratedScenario s, AllocationDecision ours, AllocationDecision upstream) {
    List<String> out = new ArrayList<>(AllocationDecision.disagreements(ours, upstream));
    if (ours.exit() == 2 || upstream.exit() == 2) {
      return out;
    }
    AllocationChecker checker = AllocationChecker.of(s);
    checker
        .check(List.copyOf(ours.claims().values()), s.pods())
        .forEach(v -> out.add(OURS_INVALID + v));
    checker
        .check(List.copyOf(upstream.claims().values()), s.pods())
        .forEach(v -> out.add(UPSTREAM_INVALID + v));
    return out;
  }

  static AllocationDecision decide(UpstreamAlloc.Result r) throws IOException {
    Map<String, ResourceClaim> claims = new LinkedHashMap<>();
    if (r.exit() != 2) {
      for (JsonNode item : JSON.readTree(r.out()).path("items")) {
        ResourceClaim c = JSON.treeToValue(item, ResourceClaim.class);
        String ns =
            c.getMetadata().getNamespace() == null ? "default" : c.getMetadata().getNamespace();
        claims.put(ns + "/" + c.getMetadata().getName(), c);
      }
    }
    return new AllocationDecision(r.exit(), claims, r.err());
  }
}
