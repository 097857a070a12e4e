package io.kdra.it.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClusterAddressesTest {

  @ParameterizedTest
  @CsvSource({
    // slot, node, gateway,         node ip,         pod cidr,           cluster cidr,     host veth
    "0,  0,  198.51.100.1,   198.51.100.2,   198.18.0.0/24,   198.18.0.0/20,   kdramn0v0",
    "0,  12, 198.51.100.1,   198.51.100.14,  198.18.12.0/24,  198.18.0.0/20,   kdramn0v12",
    "1,  2,  198.51.100.17,  198.51.100.20,  198.18.18.0/24,  198.18.16.0/20,  kdramn1v2",
    "15, 12, 198.51.100.241, 198.51.100.254, 198.18.252.0/24, 198.18.240.0/20, kdramn15v12",
  })
  void plansAddressesInsideTheSlotsRanges(
      int slot,
      int node,
      String gateway,
      String nodeIp,
      String podCidr,
      String clusterCidr,
      String hostVeth) {
    ClusterAddresses a = new ClusterAddresses(slot);
    assertThat(a.gateway()).isEqualTo(gateway);
    assertThat(a.nodeIp(node)).isEqualTo(nodeIp);
    assertThat(a.podCidr(node)).isEqualTo(podCidr);
    assertThat(a.clusterCidr()).isEqualTo(clusterCidr);
    assertThat(a.hostVeth(node)).isEqualTo(hostVeth).hasSizeLessThanOrEqualTo(15);
  }

  @Test
  void slotsNeverShareAnAddress() {
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (int slot = 0; slot < ClusterAddresses.SLOTS; slot++) {
      ClusterAddresses a = new ClusterAddresses(slot);
      assertThat(seen.add(a.gateway())).isTrue();
      assertThat(seen.add(a.clusterCidr())).isTrue();
      for (int node = 0; node < ClusterAddresses.MAX_NODES; node++) {
        assertThat(seen.add(a.nodeIp(node))).isTrue();
        assertThat(seen.add(a.podCidr(node))).isTrue();
      }
    }
  }

  @Test
  void refusesSlotsAndNodesOutsideTheRanges() {
    assertThatThrownBy(() -> new ClusterAddresses(16)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ClusterAddresses(0).nodeIp(13))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
