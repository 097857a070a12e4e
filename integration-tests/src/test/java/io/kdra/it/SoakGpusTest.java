package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kdra.it.SoakGpus.MigPartition;
import io.kdra.it.SoakGpus.Node;
import io.kdra.it.SoakGpus.State;
import io.kdra.it.SoakGpus.Strategy;
import io.kdra.it.SoakGpus.Use;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SoakGpusTest {

  private static final Node MPS =
      new Node(Strategy.MPS, Map.of("gpu-0", "GPU-0"), Map.of("gpu-0", "/mps/gpu-0/pipe"));
  private static final Node TIME_SLICED =
      new Node(Strategy.TIME_SLICING, Map.of("gpu-1", "GPU-1"), Map.of("gpu-1", "/mps/gpu-1/pipe"));

  private static Use use(String claim, String device) {
    return new Use(claim, device, false, Optional.empty());
  }

  private static Use admin(String claim, String device) {
    return new Use(claim, device, true, Optional.empty());
  }

  private static Use interval(String claim, String device, String interval) {
    return new Use(claim, device, false, Optional.of(interval));
  }

  private static State state(
      Set<String> instances,
      Map<String, String> modes,
      Map<String, Integer> slices,
      Set<String> daemons) {
    return new State(instances, modes, slices, daemons);
  }

  private static final State BLANK = state(Set.of(), Map.of(), Map.of(), Set.of());

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of("nothing prepared, blank GPU", MPS, List.of(), BLANK, List.of()),
        Arguments.of(
            "nothing prepared, modes back to their defaults",
            MPS,
            List.of(),
            state(Set.of(), Map.of("GPU-0", "DEFAULT"), Map.of("GPU-0", 0), Set.of()),
            List.of()),
        Arguments.of(
            "an MPS claim: daemon and EXCLUSIVE_PROCESS",
            MPS,
            List.of(use("a", "gpu-0")),
            state(
                Set.of(),
                Map.of("GPU-0", "EXCLUSIVE_PROCESS"),
                Map.of(),
                Set.of("/mps/gpu-0/pipe")),
            List.of()),
        Arguments.of(
            "an MPS claim whose daemon died with the driver and was not started again",
            MPS,
            List.of(use("a", "gpu-0")),
            state(Set.of(), Map.of("GPU-0", "EXCLUSIVE_PROCESS"), Map.of(), Set.of()),
            List.of("gpu-0: no MPS daemon for the claims [a]")),
        Arguments.of(
            "a daemon left after the last claim went",
            MPS,
            List.of(),
            state(
                Set.of(),
                Map.of("GPU-0", "EXCLUSIVE_PROCESS"),
                Map.of(),
                Set.of("/mps/gpu-0/pipe")),
            List.of(
                "gpu-0: compute mode EXCLUSIVE_PROCESS with no claim on it",
                "gpu-0: an MPS daemon with no claim on it")),
        Arguments.of(
            "only an adminAccess claim: nothing set up",
            MPS,
            List.of(admin("x", "gpu-0")),
            BLANK,
            List.of()),
        Arguments.of(
            "an adminAccess claim started a daemon",
            MPS,
            List.of(admin("x", "gpu-0")),
            state(
                Set.of(),
                Map.of("GPU-0", "EXCLUSIVE_PROCESS"),
                Map.of(),
                Set.of("/mps/gpu-0/pipe")),
            List.of(
                "gpu-0: compute mode EXCLUSIVE_PROCESS with no claim on it",
                "gpu-0: an MPS daemon with no claim on it")),
        Arguments.of(
            "time-sliced claims agreeing on Medium",
            TIME_SLICED,
            List.of(interval("a", "gpu-1", "Medium"), use("b", "gpu-1")),
            state(Set.of(), Map.of("GPU-1", "DEFAULT"), Map.of("GPU-1", 2), Set.of()),
            List.of()),
        Arguments.of(
            "the interval a claim named is not the GPU's",
            TIME_SLICED,
            List.of(interval("a", "gpu-1", "Long")),
            state(Set.of(), Map.of("GPU-1", "DEFAULT"), Map.of("GPU-1", 0), Set.of()),
            List.of("gpu-1: time slice 0, its claims [a] named [Long]")),
        Arguments.of(
            "the interval stays after the last claim went",
            TIME_SLICED,
            List.of(),
            state(Set.of(), Map.of("GPU-1", "DEFAULT"), Map.of("GPU-1", 3), Set.of()),
            List.of("gpu-1: time slice 3 with no claim on it")),
        Arguments.of(
            "a time-sliced claim on a GPU never made shareable",
            TIME_SLICED,
            List.of(use("a", "gpu-1")),
            BLANK,
            List.of("gpu-1: compute mode null under the time-sliced claims [a]")),
        Arguments.of(
            "a MIG claim and its instance",
            TIME_SLICED,
            List.of(use("m", "gpu-0-mig-3g20gb-4")),
            state(Set.of("0:9:4"), Map.of(), Map.of(), Set.of()),
            List.of()),
        Arguments.of(
            "an instance whose claim is gone (leaked)",
            TIME_SLICED,
            List.of(),
            state(Set.of("0:9:4"), Map.of(), Map.of(), Set.of()),
            List.of("MIG instances [0:9:4], the prepared claims' partitions imply []")),
        Arguments.of(
            "a prepared MIG claim without its instance (lost)",
            TIME_SLICED,
            List.of(use("m", "gpu-0-mig-1g5gb-6")),
            BLANK,
            List.of("MIG instances [], the prepared claims' partitions imply [0:19:6]")),
        Arguments.of(
            "a GPU instance without its compute instance",
            TIME_SLICED,
            List.of(use("m", "gpu-0-mig-1g5gb-6")),
            state(Set.of("0:19:6 (no compute instance)"), Map.of(), Map.of(), Set.of()),
            List.of(
                "MIG instances [0:19:6 (no compute instance)], the prepared claims' partitions"
                    + " imply [0:19:6]")),
        Arguments.of(
            "an adminAccess claim on a partition creates no instance",
            TIME_SLICED,
            List.of(admin("x", "gpu-0-mig-1g5gb-6")),
            BLANK,
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theGpusMustHoldWhatThePreparedClaimsImply(
      String name, Node node, List<Use> uses, State state, List<String> expected) {
    assertThat(SoakGpus.mismatches(node, uses, state)).isEqualTo(expected);
  }

  @Test
  void readsEachDevicesAdminMarkAndIntervalFromItsClaimsCdiSpec() throws Exception {
    String spec =
        "{\"devices\": [{\"name\": \"a\", \"containerEdits\": {\"env\": [\"KDRA_DEVICE_0=gpu-1\","
            + " \"KDRA_DEVICE_0_TIMESLICE_INTERVAL=Medium\", \"KDRA_DEVICE_1=gpu-0\","
            + " \"KDRA_DEVICE_1_ADMIN_ACCESS=true\"]}}]}";
    var checkpoint =
        new ObjectMapper()
            .createObjectNode()
            .set(
                "preparedClaims",
                new ObjectMapper()
                    .readTree(
                        "{\"uid-1\": {\"devices\": [{\"poolName\": \"node-t\", \"deviceName\":"
                            + " \"gpu-1\"}, {\"poolName\": \"node-t\", \"deviceName\": \"gpu-0\"},"
                            + " {\"poolName\": \"node-a\", \"deviceName\": \"gpu-0\"}],"
                            + " \"cdiSpec\": "
                            + new ObjectMapper().writeValueAsString(spec)
                            + "}}"));

    assertThat(SoakGpus.uses(checkpoint, "node-t"))
        .containsExactly(
            new Use("uid-1", "gpu-1", false, Optional.of("Medium")),
            new Use("uid-1", "gpu-0", true, Optional.empty()));
  }

  static Stream<Arguments> overlaps() {
    return Stream.of(
        Arguments.of(List.of("gpu-0-mig-1g5gb-0", "gpu-0-mig-1g5gb-1"), List.of()),
        Arguments.of(
            List.of("gpu-0-mig-3g20gb-4", "gpu-0-mig-2g10gb-4"),
            List.of("gpu-0-mig-3g20gb-4 and gpu-0-mig-2g10gb-4")),
        Arguments.of(List.of("gpu-0-mig-3g20gb-0", "gpu-0-mig-2g10gb-4"), List.of()),
        Arguments.of(
            List.of("gpu-0-mig-7g40gb-0", "gpu-0-mig-1g5gb-6"),
            List.of("gpu-0-mig-7g40gb-0 and gpu-0-mig-1g5gb-6")),
        Arguments.of(List.of("gpu-0-mig-1g5gb-3", "gpu-0-mig-2g10gb-4"), List.of()));
  }

  @ParameterizedTest
  @MethodSource("overlaps")
  void partitionsOverlapWhenTheyShareAMemorySlice(List<String> devices, List<String> expected) {
    assertThat(
            SoakGpus.overlapping(
                devices.stream().map(d -> MigPartition.parse(d).orElseThrow()).toList()))
        .isEqualTo(expected);
  }

  static Stream<Arguments> free() {
    return Stream.of(
        Arguments.of("3g.20gb", List.of(), List.of("gpu-0-mig-3g20gb-0", "gpu-0-mig-3g20gb-4")),
        Arguments.of("3g.20gb", List.of("gpu-0-mig-1g5gb-5"), List.of("gpu-0-mig-3g20gb-0")),
        Arguments.of("3g.20gb", List.of("gpu-0-mig-1g5gb-5", "gpu-0-mig-2g10gb-2"), List.of()),
        Arguments.of(
            "1g.5gb",
            List.of("gpu-0-mig-3g20gb-0", "gpu-0-mig-2g10gb-4"),
            List.of("gpu-0-mig-1g5gb-6")),
        Arguments.of(
            "2g.10gb",
            List.of("gpu-0-mig-1g5gb-6"),
            List.of("gpu-0-mig-2g10gb-0", "gpu-0-mig-2g10gb-2", "gpu-0-mig-2g10gb-4")));
  }

  @ParameterizedTest
  @MethodSource("free")
  void aProfileFitsWhereAPublishedPlacementOverlapsNoAllocatedPartition(
      String profile, List<String> allocated, List<String> expected) {
    Set<String> published =
        Set.copyOf(
            Stream.of("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")
                .flatMap(p -> MigPartition.placements(0, p).stream())
                .map(MigPartition::device)
                .toList());
    assertThat(
            SoakGpus.freePlacements(
                0,
                profile,
                published,
                allocated.stream().map(d -> MigPartition.parse(d).orElseThrow()).toList()))
        .isEqualTo(expected);
  }

  @Test
  void aPlacementThatIsNotPublishedDoesNotFit() {
    assertThat(SoakGpus.freePlacements(0, "7g.40gb", Set.of(), List.of())).isEmpty();
  }
}
