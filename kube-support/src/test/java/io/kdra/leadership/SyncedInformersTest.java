package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;

import io.javaoperatorsdk.operator.health.InformerHealthIndicator;
import io.javaoperatorsdk.operator.health.InformerWrappingEventSourceHealthIndicator;
import io.javaoperatorsdk.operator.health.Status;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class SyncedInformersTest {

  /** Each event source as the list of its informers' "has listed". */
  record Case(String name, List<List<Boolean>> sources, boolean listed) {
    @Override
    public String toString() {
      return name;
    }
  }

  static List<Case> cases() {
    return List.of(
        new Case("no event source", List.of(), true),
        new Case("one informer, listed", List.of(List.of(true)), true),
        new Case("one informer, not yet", List.of(List.of(false)), false),
        new Case("every source listed", List.of(List.of(true), List.of(true, true)), true),
        new Case(
            "one namespace of a source not yet",
            List.of(List.of(true), List.of(true, false)),
            false));
  }

  @ParameterizedTest
  @MethodSource("cases")
  @SuppressWarnings("rawtypes")
  void writesWaitUntilEveryInformerHasListed(Case c) {
    List<InformerWrappingEventSourceHealthIndicator> sources =
        c.sources().stream().map(SyncedInformersTest::source).toList();

    assertThat(SyncedInformers.allListed(sources)).isEqualTo(c.listed());
  }

  @SuppressWarnings("rawtypes")
  static InformerWrappingEventSourceHealthIndicator source(List<Boolean> informersListed) {
    Map<String, InformerHealthIndicator> informers = new LinkedHashMap<>();
    for (int i = 0; i < informersListed.size(); i++) {
      informers.put("ns-" + i, informer(informersListed.get(i)));
    }
    return () -> informers;
  }

  static InformerHealthIndicator informer(boolean listed) {
    return new InformerHealthIndicator() {
      @Override
      public boolean hasSynced() {
        return listed;
      }

      @Override
      public boolean isWatching() {
        return listed;
      }

      @Override
      public boolean isRunning() {
        return true;
      }

      @Override
      public String getTargetNamespace() {
        return null;
      }

      @Override
      public Status getStatus() {
        return listed ? Status.HEALTHY : Status.UNHEALTHY;
      }
    };
  }
}
