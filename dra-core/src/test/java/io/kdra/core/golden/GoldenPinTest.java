package io.kdra.core.golden;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kdra.core.cel.UpstreamSources;
import io.kdra.core.testing.ScenarioGenerator.Profile;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The golden files were written by the oracle {@link UpstreamSources#PINNED} names: after a bump of
 * cel-go, Kubernetes or Go they fail here until regenerated, so that the unit tests never compare
 * with an older upstream than the one the port claims to follow.
 */
class GoldenPinTest {

  @Test
  void everyGoldenFileIsFromThePinnedOracle() {
    List<String> files = new ArrayList<>(List.of(CelGolden.FILE));
    for (Profile p : Profile.values()) {
      files.add(AllocationGolden.file(p));
    }
    for (String f : files) {
      assertThat(
              GoldenFiles.pinProblems(GoldenFiles.readResource(f).oracle(), UpstreamSources.PINNED))
          .as(
              "%s was written by another oracle than UpstreamSources.PINNED; regenerate: %s",
              f, GoldenFiles.REGENERATE)
          .isEmpty();
    }
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # cel-go  | k8s.io   | go        | problems
          v0.29.2   | v0.37.2  | go1.26.8  | 0
          v0.29.2   | v0.37.2  | go1.26    | 0
          v0.26.0   | v0.37.2  | go1.26.8  | 1
          v0.29.2   | v0.36.3  | go1.26.8  | 4
          v0.29.2   | v0.37.2  | go1.25.3  | 1
          v0.29.2   | v0.37.2  | go1.260   | 1
          """)
  void pinProblemsNameEachDifferentVersion(String celGo, String k8s, String go, int problems) {
    JsonNode oracle =
        GoldenFiles.JSON
            .createObjectNode()
            .put("go", go)
            .set(
                "modules",
                GoldenFiles.JSON
                    .createObjectNode()
                    .put("github.com/google/cel-go", celGo)
                    .put("k8s.io/api", k8s)
                    .put("k8s.io/apimachinery", k8s)
                    .put("k8s.io/apiserver", k8s)
                    .put("k8s.io/dynamic-resource-allocation", k8s));
    UpstreamSources.Versions pinned =
        new UpstreamSources.Versions("v0.29.2", "v0.37.2", "1.26", "0.14.0");
    assertThat(GoldenFiles.pinProblems(oracle, pinned)).hasSize(problems);
  }

  @Test
  void anOracleWithoutVersionsIsNotThePinnedOne() {
    assertThat(GoldenFiles.pinProblems(GoldenFiles.JSON.createObjectNode(), UpstreamSources.PINNED))
        .hasSize(6);
  }
}
