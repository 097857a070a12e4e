package io.kdra.claimcontroller.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RetryStreakTest {

  @ParameterizedTest(name = "attempt {0}: INFO {1}")
  @CsvSource({
    "1, false",
    "2, false",
    "9, false",
    "10, true",
    "11, false",
    "99, false",
    "100, true",
    "101, false",
    "200, true",
    "1000, true"
  })
  void aLongRunOfRetriesIsLoggedRarely(int attempt, boolean info) {
    assertThat(RetryStreak.worthInfo(attempt)).isEqualTo(info);
  }
}
