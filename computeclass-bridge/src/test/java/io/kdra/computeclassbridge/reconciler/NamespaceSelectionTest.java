package io.kdra.computeclassbridge.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NamespaceSelectionTest {

  private static final List<Namespace> CLUSTER =
      List.of(
          ns("team-a", Map.of("gpu", "yes", "tier", "prod"), false),
          ns("team-b", Map.of("gpu", "no", "tier", "dev"), false),
          ns("team-c", Map.of("tier", "dev"), false),
          ns("going", Map.of("gpu", "yes"), true));

  private static Namespace ns(String name, Map<String, String> labels, boolean terminating) {
    return new NamespaceBuilder()
        .withNewMetadata()
        .withName(name)
        .withLabels(labels)
        .withDeletionTimestamp(terminating ? "2026-01-01T00:00:00Z" : null)
        .endMetadata()
        .build();
  }

  @ParameterizedTest(name = "names [{0}] selector [{1}] -> [{2}]")
  @CsvSource(
      delimiter = ';',
      value = {
        "'';gpu=yes;team-a",
        "'';gpu==yes;team-a",
        "'';gpu!=yes;team-b,team-c",
        "'';gpu;team-a,team-b",
        "'';!gpu;team-c",
        "'';tier in (prod, dev),gpu notin (no);team-a,team-c",
        "'';'';''",
        "team-c,missing;gpu=yes;team-a,team-c",
        "going;'';''"
      })
  void selectsByListAndLabels(String names, String selector, String expected) {
    NamespaceSelection s =
        new NamespaceSelection(
            names.isEmpty() ? List.of() : List.of(names.split(",")), Optional.of(selector));
    assertThat(String.join(",", s.select(CLUSTER))).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = ';',
      value = {"a b", "a in b", "=x"})
  void rejectsWhatItCannotParse(String selector) {
    assertThatThrownBy(() -> new NamespaceSelection(List.of(), Optional.of(selector)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kdra.computeclass-bridge.namespaces.selector");
  }
}
