package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@EnableKubernetesMockClient
class ElectionWiringTest {

  KubernetesClient client;

  record Settings(
      boolean enabled,
      Optional<String> leaseName,
      Optional<String> leaseNamespace,
      Optional<String> identity,
      Duration leaseDuration,
      Duration renewDeadline,
      Duration retryPeriod)
      implements LeaderElectionSettings {
    static Settings defaults() {
      return new Settings(
          true,
          Optional.empty(),
          Optional.empty(),
          Optional.empty(),
          Duration.ofSeconds(15),
          Duration.ofSeconds(10),
          Duration.ofSeconds(2));
    }

    /**
     * A publisher's election on Lease {@code namespace/name} as {@code identity}, with a lease and
     * renew deadline far longer than any test (only a Lease made free can be taken) and a quick
     * retry.
     */
    static ElectionWiring publisherElection(
        KubernetesClient client, String namespace, String name, String identity) {
      return new ElectionWiring(
          "slice-publisher",
          "kdra.slice-publisher.leader-election",
          new Settings(
              true,
              Optional.of(name),
              Optional.of(namespace),
              Optional.of(identity),
              Duration.ofHours(1),
              Duration.ofMinutes(30),
              Duration.ofMillis(100)),
          client,
          true,
          identity);
    }

    Settings disabled() {
      return new Settings(
          false, leaseName, leaseNamespace, identity, leaseDuration, renewDeadline, retryPeriod);
    }

    Settings named(String name, String namespace, String id) {
      return new Settings(
          enabled,
          Optional.of(name),
          Optional.of(namespace),
          Optional.of(id),
          leaseDuration,
          renewDeadline,
          retryPeriod);
    }
  }

  private ElectionWiring wiring(Settings s, boolean electionRuns, String hostname) {
    return new ElectionWiring(
        "slice-publisher",
        "kdra.slice-publisher.leader-election",
        s,
        client,
        electionRuns,
        hostname);
  }

  static Stream<Arguments> electing() {
    return Stream.of(
        Arguments.of("enabled, and the framework elects", true, true, true),
        Arguments.of("enabled, but a dev or test run elects nobody", true, false, false),
        Arguments.of("disabled", false, true, false),
        Arguments.of("disabled, no election either", false, false, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("electing")
  void aReplicaCompetesOnlyWhenEnabledAndTheElectionRuns(
      String name, boolean enabled, boolean electionRuns, boolean electing) {
    Settings s = enabled ? Settings.defaults() : Settings.defaults().disabled();
    ElectionWiring w = wiring(s, electionRuns, "pod-a");
    assertThat(w.electing()).isEqualTo(electing);
    Leadership leadership = w.leadership(() -> {});
    assertThat(leadership.elected()).isEqualTo(electing);
    // a single replica leads at once; an elected one only once the election says so
    assertThat(leadership.leading()).isEqualTo(!electing);
    try (LeaseFence fence = w.fence(Clock.systemUTC())) {
      assertThat(fence.mayWrite()).isEqualTo(!electing);
    }
  }

  @Test
  void defaultsNameTheLeaseAfterTheComponentInTheReplicasNamespaceWithThePodName() {
    ElectionWiring w = wiring(Settings.defaults(), true, "pod-a");
    assertThat(w.leaseName()).isEqualTo("kdra-slice-publisher");
    assertThat(w.leaseNamespace()).isEqualTo(client.getNamespace());
    assertThat(w.identity()).isEqualTo("pod-a");
  }

  @Test
  void withoutAPodNameTwoReplicasGetDifferentIdentities() {
    assertThat(wiring(Settings.defaults(), true, null).identity())
        .startsWith("slice-publisher-")
        .isNotEqualTo(wiring(Settings.defaults(), true, null).identity());
  }

  @Test
  void configuredNamesWin() {
    ElectionWiring w =
        wiring(Settings.defaults().named("my-lease", "kdra-system", "replica-b"), true, "pod-a");
    assertThat(w.leaseName()).isEqualTo("my-lease");
    assertThat(w.leaseNamespace()).isEqualTo("kdra-system");
    assertThat(w.identity()).isEqualTo("replica-b");

    LeaderElectionConfig elector = w.electorConfig(w.leadership(() -> {}), () -> {});
    assertThat(elector.getLock())
        .isInstanceOfSatisfying(
            LeaseLock.class, lock -> assertThat(lock.identity()).isEqualTo("replica-b"));
    assertThat(elector.isReleaseOnCancel()).isFalse();
    assertThat(elector.getRenewDeadline()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void anUnknownNamespaceIsAnErrorNamingTheProperty() {
    try (KubernetesClient noNamespace =
        new KubernetesClientBuilder()
            .withConfig(new ConfigBuilder(client.getConfiguration()).withNamespace(null).build())
            .build()) {
      ElectionWiring w =
          new ElectionWiring(
              "slice-publisher",
              "kdra.slice-publisher.leader-election",
              Settings.defaults(),
              noNamespace,
              true,
              "pod-a");
      assertThatThrownBy(w::leaseNamespace)
          .hasMessageContaining("kdra.slice-publisher.leader-election.lease-namespace is not set");
    }
  }
}
