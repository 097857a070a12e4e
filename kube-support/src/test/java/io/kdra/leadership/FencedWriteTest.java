package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FencedWriteTest {

  @ParameterizedTest(name = "leading={0}: {1}")
  @CsvSource({
    // the fence lags a win (renewal not seen yet) or an informer still lists: soon
    "true,  RETRY_SOON",
    // a standby, or a replica that lost its Lease: quiet until it leads
    "false, AWAIT_LEADERSHIP",
  })
  void aFencedWriteIsRetriedOnlyByAReplicaThatLeads(boolean leading, FencedWrite next) {
    assertThat(FencedWrite.next(leading)).isEqualTo(next);
  }
}
