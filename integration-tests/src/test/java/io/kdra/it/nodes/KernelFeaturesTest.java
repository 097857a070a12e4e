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

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "CONFIG_NFT_QUEUE=y\\nCONFIG_NETFILTER_XT_TARGET_NFQUEUE=y\\nCONFIG_NFT_COMPAT=y | NFT_QUEUE",
        "# CONFIG_NFT_QUEUE is not set\\nCONFIG_NETFILTER_XT_TARGET_NFQUEUE=y | XT_NFQUEUE",
        "CONFIG_NETFILTER_XT_TARGET_NFQUEUE=m | XT_NFQUEUE",
        "# CONFIG_NFT_QUEUE is not set\\n# CONFIG_NETFILTER_XT_TARGET_NFQUEUE is not set | NONE",
        "CONFIG_NETFILTER_XT_TARGET_NFQUEUE_X=y | NONE",
      })
  void choosesHowPacketsReachKubeNetworkPolicies(
      String config, KernelFeatures.PolicyQueue expected) {
    assertThat(KernelFeatures.policyQueue(config.replace("\\n", "\n"))).isEqualTo(expected);
  }
}
