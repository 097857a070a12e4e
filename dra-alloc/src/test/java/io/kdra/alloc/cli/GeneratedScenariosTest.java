package io.kdra.alloc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.testing.AllocationChecker;
import io.kdra.core.testing.GeneratedScenario;
import io.kdra.core.testing.ScenarioGenerator;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Our allocator, through the command, on generated scenarios of both profiles: every allocation it
 * makes passes the validity checker, it tells apart what it can and cannot allocate (neither side
 * is empty), and it never rejects the generated input. The side-by-side run against upstream's
 * allocator is {@code UpstreamDifferentialIT} in integration-tests.
 */
class GeneratedScenariosTest {

  static final int SEEDS = 100;
  static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  @TempDir Path tmp;

  @ParameterizedTest
  @EnumSource(ScenarioGenerator.Profile.class)
  void everyAllocationIsValid(ScenarioGenerator.Profile profile) throws Exception {
    int allocated = 0;
    int notAllocated = 0;
    List<String> problems = new ArrayList<>();
    for (long seed = 0; seed < SEEDS; seed++) {
      GeneratedScenario s = ScenarioGenerator.generate(seed, profile);
      Path file = tmp.resolve("seed-" + seed + ".yaml");
      Files.writeString(file, s.yaml());
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      // the alpha and newer profiles' fields need their gates, as in the differential run
      List<String> argList = new ArrayList<>(List.of("-o", "json"));
      argList.addAll(s.gateArgs());
      argList.add(file.toString());
      String[] args = argList.toArray(new String[0]);
      int status =
          Main.run(
              args,
              new ByteArrayInputStream(new byte[0]),
              new PrintStream(out, true, StandardCharsets.UTF_8),
              new PrintStream(err, true, StandardCharsets.UTF_8));
      if (status == 2) {
        problems.add("seed " + seed + ": input rejected: " + err);
        continue;
      }
      List<ResourceClaim> claims = new ArrayList<>();
      for (JsonNode item : JSON.readTree(out.toByteArray()).path("items")) {
        claims.add(JSON.treeToValue(item, ResourceClaim.class));
      }
      for (ResourceClaim c : claims) {
        if (c.getStatus() != null && c.getStatus().getAllocation() != null) {
          allocated++;
        } else {
          notAllocated++;
        }
      }
      for (String v : AllocationChecker.of(s).check(claims, s.pods())) {
        problems.add("seed " + seed + ": " + v);
      }
    }
    assertThat(problems).isEmpty();
    assertThat(allocated).as("claims allocated").isGreaterThan(SEEDS / 2);
    assertThat(notAllocated).as("claims not allocated").isGreaterThan(SEEDS / 2);
  }
}
