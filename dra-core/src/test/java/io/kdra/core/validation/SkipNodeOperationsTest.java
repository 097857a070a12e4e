package io.kdra.core.validation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SkipNodeOperationsTest {

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of(List.of(), List.of()),
        Arguments.of(List.of("*"), List.of()),
        Arguments.of(List.of("NodeUnprepareResources"), List.of()),
        Arguments.of(List.of("NodePrepareResources", "NodeUnprepareResources"), List.of()),
        Arguments.of(List.of("NodePrepareResources", "*"), List.of()),
        Arguments.of(
            List.of("NodePrepareResources"),
            List.of(
                "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also"
                    + " skipped")),
        Arguments.of(
            List.of("Prepare"),
            List.of(
                "Unsupported value: \"Prepare\": supported values: \"*\","
                    + " \"NodePrepareResources\", \"NodeUnprepareResources\"")),
        Arguments.of(List.of("*", "*"), List.of("Duplicate value: \"*\"")));
  }

  @ParameterizedTest
  @MethodSource("cases")
  void checksAsTheApiServerDoes(List<String> operations, List<String> errors) {
    assertThat(SkipNodeOperations.check(operations)).isEqualTo(errors);
  }
}
