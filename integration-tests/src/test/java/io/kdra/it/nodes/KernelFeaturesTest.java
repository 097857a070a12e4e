package io.kdra.it.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KernelFeaturesTest {

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "CONFIG_NF_TABLES=y\\nCONFIG_NFT_QUEUE=y | true",
        "CONFIG_NFT_QUEUE=m | true",
        "CONFIG_NF_TABLES=y\\n# CONFIG_NFT_QUEUE is not set | false",
        "CONFIG_NFT_QUEUE_X=y | false",
      })
  void findsTheQueueExpression(String config, boolean expected) {
    assertThat(KernelFeatures.nftQueue(config.replace("\\n", "\n"))).isEqualTo(expected);
  }
}
