package io.kdra.devicedriver.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The socket names against upstream's: the expected names were computed with Go from {@code
 * RollingUpdateRegistrarSocketFile} of k8s.io/dynamic-resource-allocation v0.37.2.
 */
class PluginSocketsTest {
  private static final String UID = "6f1c1a8e-2b9d-4c55-9d7e-0a1b2c3d4e5f";
  private static final String REGISTRY = "/var/lib/kubelet/plugins_registry";
  private static final String DIR_60 = "/" + "d".repeat(59);
  private static final String DIR_80 = "/" + "d".repeat(79);

  static Stream<Arguments> registrationSockets() {
    return Stream.of(
        Arguments.of(REGISTRY, "gpu.kdra.io", UID, "gpu.kdra.io-" + UID + "-reg.sock"),
        Arguments.of(REGISTRY, "gpu.kdra.io", "u", "gpu.kdra.io-u-reg.sock"),
        // the UID does not fit: 8 bytes of its hash
        Arguments.of(DIR_60, "gpu.kdra.io", UID, "gpu.kdra.io-VEYzYL_qkYU-reg.sock"),
        // nor does the driver name: 16 bytes of the hash of both
        Arguments.of(
            DIR_60,
            "a-very-long-driver-name.example.com",
            UID,
            "dra-ZiYSi61F6RKxg67EJFGMMA-reg.sock"),
        // nothing fits: the shortest form all the same
        Arguments.of(DIR_80, "gpu.kdra.io", UID, "dra-scIVxra-tlO15msqOzTMcw-reg.sock"));
  }

  @ParameterizedTest(name = "{0} {1} {2}")
  @MethodSource("registrationSockets")
  void perPodRegistrationSocketsAreNamedAsUpstreamNamesThem(
      String registry, String driver, String uid, String expected) {
    assertThat(PluginSockets.rollingUpdateRegistrarSocketFile(Path.of(registry), driver, uid))
        .isEqualTo(expected);
  }

  @ParameterizedTest(name = "pod uid [{0}]")
  @MethodSource("fixedOrPerPod")
  void socketsAndLockFile(String uid, String registration, String dra, boolean perPod) {
    PluginSockets s =
        PluginSockets.of(
            "gpu.kdra.io", Path.of(REGISTRY), Path.of("/var/lib/kubelet/plugins"), uid);
    assertThat(s.registrationSocket()).isEqualTo(Path.of(REGISTRY, registration));
    assertThat(s.draSocket()).isEqualTo(Path.of("/var/lib/kubelet/plugins/gpu.kdra.io", dra));
    assertThat(s.lockFile())
        .isEqualTo(Path.of("/var/lib/kubelet/plugins/gpu.kdra.io/serialize.lock"));
    assertThat(s.perPod()).isEqualTo(perPod);
  }

  static Stream<Arguments> fixedOrPerPod() {
    return Stream.of(
        Arguments.of(null, "gpu.kdra.io-reg.sock", "dra.sock", false),
        Arguments.of("", "gpu.kdra.io-reg.sock", "dra.sock", false),
        Arguments.of(" ", "gpu.kdra.io-reg.sock", "dra.sock", false),
        Arguments.of(UID, "gpu.kdra.io-" + UID + "-reg.sock", "dra-" + UID + ".sock", true));
  }
}
