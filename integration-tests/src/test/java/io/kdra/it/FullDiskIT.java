package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.twoL4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.TestKubelet;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import io.kdra.it.support.PrivateTmpfs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The disk under the device-driver's state fills up (a real {@code ENOSPC}): node-a's driver runs
 * in a private mount namespace in which a 256 KiB tmpfs ({@link PrivateTmpfs}) is mounted over the
 * directory that holds its CDI specs and its checkpoint; the test fills it from outside. With one
 * page left the claim's spec fits and its checkpoint entry does not, with none not even the spec:
 * either way the kubelet's call fails with an error naming the file and the cause, the checkpoint
 * is untouched and no spec or temporary file of the claim stays. A driver restarted on the full
 * disk starts cleanly; once there is space, the kubelet's retry prepares the claim, and a restarted
 * driver answers both claims as before. The mount ends with the namespace's last process, so a
 * killed test leaks no mount.
 */
@ExtendWith(ControlPlane.class)
@EnabledIf(
    value = "io.kdra.it.nodes.RealNode#runsAsRoot",
    disabledReason = "a mount namespace and a tmpfs need root")
class FullDiskIT {

  private static final String NODE = "node-a";

  /** Outside the stack's node directories, which a stack clears at start. */
  static final PrivateTmpfs DISK = PrivateTmpfs.over(Path.of("target", "full-disk"), "256k");

  private static final Path CDI = DISK.dir().resolve("cdi");
  private static final Path CHECKPOINT = DISK.dir().resolve("plugin/checkpoint.json");

  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(
          twoL4s(NODE)
              .withDriverProperties(
                  Map.of(
                      "kdra.device-driver.cdi-dir",
                      CDI.toString(),
                      "kdra.device-driver.checkpoint-file",
                      CHECKPOINT.toString()))
              .withDriverMount(DISK));

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(Dra.publishedDevices(client, NODE)).isEqualTo(2));
  }

  @AfterAll
  static void unmount() {
    // the driver, still inside, keeps the mount until the stack ends it
    DISK.close();
  }

  @Test
  void aFullDiskFailsThePrepareWithItsCauseLeavesNothingHalfWrittenAndTheRetrySucceeds()
      throws Exception {
    String ns = stack.namespace;
    TestKubelet kubelet = stack.nodes.kubelet(NODE);
    String driver = "device-driver-" + NODE;
    stack.createClusterScoped(
        Dra.gpuClass(
            "full-disk-gpu",
            "device.attributes[\"" + Stack.DRIVER + "\"].productName == \"NVIDIA L4\""));
    client.resource(Dra.template(ns, "one-gpu", "full-disk-gpu", 1)).create();

    Pod before = client.resource(Dra.podWithTemplate(ns, "before", "one-gpu")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(kubelet.prepared(before)).isNotNull());
    String beforeUid = Dra.claimOf(client, before, "gpu").getMetadata().getUid();
    List<String> beforeIds = kubelet.prepared(before).cdiIds();
    assertThat(cdiFiles()).containsExactly(spec(beforeUid));
    String checkpoint = Files.readString(DISK.fromOutside(CHECKPOINT));

    // one page left: the next claim's spec fits, its checkpoint entry does not
    DISK.fill(1);
    Pod starved = client.resource(Dra.podWithTemplate(ns, "starved", "one-gpu")).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                String.valueOf(kubelet.lastError(starved))
                    .contains(
                        "cannot write the checkpoint " + CHECKPOINT + ": No space left on device"));
    String starvedUid = Dra.claimOf(client, starved, "gpu").getMetadata().getUid();
    assertThat(kubelet.lastError(starved)).contains("claim " + ns + "/");
    assertThat(kubelet.prepared(starved)).isNull();
    // the failed prepare takes its spec back (each retry writes it for a moment)
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(() -> assertThat(cdiFiles()).containsExactly(spec(beforeUid)));
    assertThat(Files.readString(DISK.fromOutside(CHECKPOINT))).isEqualTo(checkpoint);

    // no page left: not even the spec can be written, and no temporary file stays
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              DISK.fill(0); // tops up a page a retry's spec held meanwhile
              return String.valueOf(kubelet.lastError(starved))
                  .contains(
                      "cannot write the CDI spec "
                          + CDI.resolve(spec(starvedUid))
                          + ": No space left on device");
            });
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(() -> assertThat(cdiFiles()).containsExactly(spec(beforeUid)));

    // a driver restarted on the full disk starts cleanly, and still answers the first claim
    stack.services.crash(driver);
    stack.services.restart(driver);
    assertThat(checkpointClaims()).containsExactly(beforeUid);
    assertThat(kubelet.prepareAgain(before).cdiIds()).isEqualTo(beforeIds);
    assertThat(kubelet.prepared(starved)).isNull();

    // space is back: the kubelet's retry prepares the claim
    DISK.free();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(kubelet.prepared(starved)).isNotNull());
    List<String> starvedIds = kubelet.prepared(starved).cdiIds();
    assertThat(cdiFiles()).containsExactlyInAnyOrder(spec(beforeUid), spec(starvedUid));
    assertThat(checkpointClaims()).containsExactlyInAnyOrder(beforeUid, starvedUid);

    // and a restarted driver answers both as before
    stack.services.crash(driver);
    stack.services.restart(driver);
    assertThat(kubelet.prepareAgain(before).cdiIds()).isEqualTo(beforeIds);
    assertThat(kubelet.prepareAgain(starved).cdiIds()).isEqualTo(starvedIds);
    assertThat(cdiFiles()).containsExactlyInAnyOrder(spec(beforeUid), spec(starvedUid));

    client.resource(before).delete();
    client.resource(starved).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(checkpointClaims()).isEmpty();
              assertThat(cdiFiles()).isEmpty();
            });
  }

  private static String spec(String uid) {
    return "k8s.gpu.kdra.io-claim_" + uid + ".json";
  }

  /** Every file in the driver's CDI directory (temporary ones too), as the driver sees it. */
  private static List<String> cdiFiles() throws Exception {
    Path dir = DISK.fromOutside(CDI);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(f -> f.getFileName().toString()).sorted().toList();
    }
  }

  /** UIDs of the claims in the driver's checkpoint, which must parse. */
  private static Set<String> checkpointClaims() throws Exception {
    Path file = DISK.fromOutside(CHECKPOINT);
    Set<String> uids = new TreeSet<>();
    if (Files.exists(file)) {
      JsonNode root = new ObjectMapper().readTree(file.toFile());
      assertThat(root.path("apiVersion").asText()).isEqualTo("checkpoint.kdra.io/v1");
      root.path("preparedClaims").fieldNames().forEachRemaining(uids::add);
    }
    return uids;
  }
}
