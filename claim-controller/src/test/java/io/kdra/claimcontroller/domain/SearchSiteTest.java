package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SearchSiteTest {

  @ParameterizedTest(name = "searched out {0}, searches {1}, extended by class {2}: {3}")
  @CsvSource({
    // a pod whose search ran out before searches off the lock from then on
    "true, true, false, OFF_LOCK",
    // the first attempt, and every attempt of a pod whose search never ran out: under the lock
    "false, true, false, UNDER_LOCK",
    // no claim to allocate: no search to move
    "true, false, false, UNDER_LOCK",
    "false, false, false, UNDER_LOCK",
    // extended resources served by a DeviceClass: their special claim is searched under the lock
    "true, true, true, UNDER_LOCK",
    "false, true, true, UNDER_LOCK",
  })
  void whereTheSearchRuns(
      boolean searchedOutBefore, boolean searches, boolean extendedByClass, SearchSite site) {
    assertThat(SearchSite.of(searchedOutBefore, searches, extendedByClass)).isEqualTo(site);
  }
}
