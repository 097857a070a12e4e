package io.kdra.alloc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link YamlScalars} types a plain scalar as Jackson's YAML parser does when it reads the scalar
 * inside a document: the same node class and value, on hand-picked text and on integers drawn over
 * the whole range its decimal shortcut takes.
 */
class YamlScalarsTest {

  private static final ObjectMapper MAPPER = InputReader.yamlMapper();

  static Stream<String> plainScalars() {
    return Stream.of(
        "0",
        "-0",
        "+0",
        "7",
        "-7",
        "+7",
        "007",
        "0x1F",
        "0b11",
        "1_000",
        "2147483647",
        "2147483648",
        "-2147483648",
        "-2147483649",
        "999999999999999999",
        "-999999999999999999",
        "1000000000000000000",
        "9223372036854775807",
        "9223372036854775808",
        "12345678901234567890",
        "1.5",
        "-.5",
        "1e3",
        "1:20",
        "true",
        "no",
        "Off",
        "y",
        "null",
        "~",
        "",
        "80Gi",
        "node-0",
        "2024-01-01",
        "1-2",
        "12a",
        "--1");
  }

  @ParameterizedTest
  @MethodSource("plainScalars")
  void typesAsJacksonDoes(String text) throws Exception {
    JsonNode expected = MAPPER.readTree("v: " + text).get("v");
    JsonNode actual = new YamlScalars(MAPPER).plain(text);
    assertThat(actual.getClass()).isEqualTo(expected.getClass());
    assertThat(actual).isEqualTo(expected);
  }

  @Test
  void decimalIntegersOfEveryLengthAsJacksonTypesThem() throws Exception {
    Random random = new Random(20261203);
    List<String> texts = new ArrayList<>();
    for (int digits = 1; digits <= 19; digits++) {
      for (int k = 0; k < 50; k++) {
        StringBuilder b = new StringBuilder(random.nextBoolean() ? "-" : "");
        b.append((char) ('1' + random.nextInt(9)));
        for (int d = 1; d < digits; d++) {
          b.append((char) ('0' + random.nextInt(10)));
        }
        texts.add(b.toString());
      }
    }
    int shortcut = 0;
    for (String text : texts) {
      JsonNode expected = MAPPER.readTree("v: " + text).get("v");
      JsonNode actual = new YamlScalars(MAPPER).plain(text);
      assertThat(actual.getClass()).as(text).isEqualTo(expected.getClass());
      assertThat(actual).as(text).isEqualTo(expected);
      if (YamlScalars.decimalInteger(text) != null) {
        shortcut++;
      }
    }
    assertThat(shortcut).as("integers the shortcut took").isEqualTo(18 * 50);
  }
}
