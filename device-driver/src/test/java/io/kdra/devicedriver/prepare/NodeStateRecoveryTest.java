package io.kdra.devicedriver.prepare;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PrepareResult;
import io.kdra.devicedriver.testing.ClaimFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link DeviceDriver#restore}: what a driver that starts after another one stopped finds. */
class NodeStateRecoveryTest extends DeviceDriverFixture {
  @Test
  void aRestartedDriverAnswersTheSameAndUnpreparesWhatTheOldOnePrepared() throws Exception {
    ClaimFixture a = claim("a").uid("ua").result("gpu", "gpu-0");
    ClaimFixture b = claim("b").uid("ub").result("gpu", "gpu-1");
    reader.add(a.build()).add(b.build());
    DeviceDriver old = driver();
    Map<String, PrepareResult> before = old.prepareResourceClaims(List.of(a.ref(), b.ref()));
    old.close(); // "stopped mid-way": b is prepared but never unprepared by this process

    reader.broken = true; // the new process must not need the API for known claims
    DeviceDriver fresh = driver();
    assertThat(fresh.restore()).isEqualTo(2);
    Map<String, PrepareResult> after = fresh.prepareResourceClaims(List.of(a.ref(), b.ref()));
    assertThat(after).isEqualTo(before);
    assertThat(cdiFiles()).hasSize(2);

    ClaimRef junk = new ClaimRef("default", "junk", "junk");
    assertThat(fresh.unprepareResourceClaims(List.of(a.ref(), b.ref(), junk)))
        .containsExactlyInAnyOrderEntriesOf(Map.of("ua", "", "ub", "", "junk", ""));
    assertThat(cdiFiles()).isEmpty();
    assertThat(CheckpointStore.open(dir.resolve("plugin/checkpoint.json"), Clock.systemUTC()).all())
        .isEmpty();
  }

  @Test
  void restoreRewritesLostSpecsAndRemovesOrphans() throws Exception {
    ClaimFixture c = claim("c").uid("u").result("gpu", "gpu-0");
    reader.add(c.build());
    driver().prepareResourceClaims(List.of(c.ref()));
    Path spec = dir.resolve("cdi/k8s.gpu.kdra.io-claim_u.json");
    String content = Files.readString(spec);
    Files.delete(spec);
    // a crash between spec and checkpoint write leaves a spec no claim owns; another vendor's
    // spec in the same directory is not ours to touch
    Files.writeString(dir.resolve("cdi/k8s.gpu.kdra.io-claim_gone.json"), "{}");
    Files.writeString(dir.resolve("cdi/k8s.net.example.com-claim_x.json"), "{}");

    driver().restore();
    assertThat(spec).hasContent(content);
    assertThat(cdiFiles())
        .containsExactly("k8s.gpu.kdra.io-claim_u.json", "k8s.net.example.com-claim_x.json");
  }

  /**
   * The window kdra.device-driver.test-only.prepare-delay holds open: the spec is written, the
   * checkpoint entry is not. A driver that dies there (here: one whose prepare never returns)
   * leaves an orphaned spec; its successor removes it at startup and the kubelet's retry prepares
   * the claim once, with the CDI ids an uninterrupted prepare returns.
   */
  @Test
  void aCrashBetweenSpecAndCheckpointIsPreparedOnceByTheSuccessor() throws Exception {
    ClaimFixture c = claim("c").uid("u").result("gpu", "gpu-3");
    reader.add(c.build());
    Path spec = dir.resolve("cdi/k8s.gpu.kdra.io-claim_u.json");
    Path checkpoint = dir.resolve("plugin/checkpoint.json");
    java.util.concurrent.CountDownLatch inWindow = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch never = new java.util.concurrent.CountDownLatch(1);
    List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    // a killed process's file lock is released by the kernel; a thread blocked forever is not
    // killed, so the dying driver locks a file of its own
    DeviceDriver dying =
        driver(
            claim -> {
              String entries;
              try {
                entries = Files.exists(checkpoint) ? Files.readString(checkpoint) : "";
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
              seen.add(
                  claim.uid()
                      + " spec="
                      + Files.exists(spec)
                      + " checkpointed="
                      + entries.contains("\"u\""));
              inWindow.countDown();
              never.await();
            },
            DeviceSetup.NONE,
            dir.resolve("killed-process.lock"));
    Thread call = new Thread(() -> dying.prepareResourceClaims(List.of(c.ref())));
    call.setDaemon(true);
    call.start();
    assertThat(inWindow.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    assertThat(seen).containsExactly("u spec=true checkpointed=false");

    DeviceDriver successor = driver();
    assertThat(successor.restore()).isZero();
    assertThat(cdiFiles()).as("the orphaned spec is removed at startup").isEmpty();
    PrepareResult retried = successor.prepareResourceClaims(List.of(c.ref())).get("u");
    assertThat(retried.error()).isEmpty();
    assertThat(retried.devices().get(0).cdiDeviceIds())
        .containsExactly("k8s.gpu.kdra.io/claim=u-gpu-3");
    assertThat(cdiFiles()).containsExactly("k8s.gpu.kdra.io-claim_u.json");
    assertThat(successor.prepareResourceClaims(List.of(c.ref())).get("u")).isEqualTo(retried);
    // the dying driver stays blocked (a daemon worker): it must not write after the test
  }

  /**
   * What a driver that died mid-prepare leaves in the setup journal, settled by its successor: a
   * claim that reached the checkpoint keeps its setup; one that did not is released, as not the
   * last user where a prepared claim shares the device; a device discovery does not know (yet) is
   * kept for a later pass.
   */
  @Test
  void theSuccessorSettlesTheSetupIntentsADeadDriverLeft() throws Exception {
    ClaimFixture a = claim("a").uid("ua").result("gpu", "gpu-0");
    reader.add(a.build());
    RecordingSetup setup = new RecordingSetup();
    DeviceDriver old = driver(DeviceDriver.PrepareInterlude.NONE, setup);
    assertThat(old.prepareResourceClaims(List.of(a.ref())).get("ua").error()).isEmpty();
    SetupJournal journal = SetupJournal.beside(dir.resolve("plugin/checkpoint.json"));
    assertThat(journal.pending()).as("a committed prepare leaves no intent").isEmpty();
    old.close();
    journal.begin("ua", "gpu-0"); // died after the checkpoint entry, before clearing the intent
    journal.begin("ub", "gpu-0"); // died before its checkpoint entry, on a device ua shares
    journal.begin("uc", "gpu-1");
    journal.begin("uc", "gpu-9"); // not on this node (yet)

    RecordingSetup after = new RecordingSetup();
    DeviceDriver fresh = driver(DeviceDriver.PrepareInterlude.NONE, after);
    assertThat(fresh.restore()).isEqualTo(1);

    assertThat(after.calls).containsExactlyInAnyOrder("release gpu-0 shared", "release gpu-1 last");
    assertThat(journal.pending())
        .containsExactly(new SetupJournal.Intent("uc", List.of("gpu-1", "gpu-9")));
    assertThat(fresh.settleSetupIntents()).isEqualTo(1);
  }

  static Stream<Named<java.util.function.UnaryOperator<String>>> damagedCheckpoints() {
    return Stream.of(
        Named.of("garbage", text -> "\u0000\u0017 not a checkpoint"),
        Named.of("truncated", text -> text.substring(0, text.length() / 2)),
        Named.of("empty", text -> ""));
  }

  /**
   * A damaged checkpoint proves nothing about the specs: they belong to running pods, whose
   * containers need them to restart, and whose setup must still be released. The driver rebuilds
   * the entries from the specs instead of deleting them.
   */
  @ParameterizedTest
  @MethodSource("damagedCheckpoints")
  void aDamagedCheckpointKeepsEverySpecAndUnprepareStillReleases(
      java.util.function.UnaryOperator<String> damage) throws Exception {
    ClaimFixture a = claim("a").uid("ua").result("gpu", "gpu-0");
    ClaimFixture b = claim("b").uid("ub").result("x", "gpu-1").result("y", "gpu-2");
    reader.add(a.build()).add(b.build());
    RecordingSetup setup = new RecordingSetup();
    DeviceDriver old = driver(DeviceDriver.PrepareInterlude.NONE, setup);
    Map<String, PrepareResult> before = old.prepareResourceClaims(List.of(a.ref(), b.ref()));
    old.close();
    Map<String, String> specs = new java.util.TreeMap<>();
    for (String f : cdiFiles()) {
      specs.put(f, Files.readString(dir.resolve("cdi").resolve(f)));
    }
    // a spec that cannot be read back is kept too: only its claim's unprepare removes it
    Files.writeString(dir.resolve("cdi/k8s.gpu.kdra.io-claim_junk.json"), "{}");
    specs.put("k8s.gpu.kdra.io-claim_junk.json", "{}");
    Path checkpoint = dir.resolve("plugin/checkpoint.json");
    Files.writeString(checkpoint, damage.apply(Files.readString(checkpoint)));

    RecordingSetup after = new RecordingSetup();
    DeviceDriver fresh = driver(DeviceDriver.PrepareInterlude.NONE, after);
    assertThat(fresh.restore()).isEqualTo(2);

    assertThat(cdiFiles()).containsExactlyElementsOf(specs.keySet());
    for (var e : specs.entrySet()) {
      assertThat(dir.resolve("cdi").resolve(e.getKey())).hasContent(e.getValue());
    }
    // a restarted kubelet prepares again: the answer is the one it got before
    assertThat(fresh.prepareResourceClaims(List.of(a.ref())).get("ua")).isEqualTo(before.get("ua"));
    after.calls.clear();
    ClaimRef junk = new ClaimRef("default", "junk", "junk");
    assertThat(fresh.unprepareResourceClaims(List.of(a.ref(), b.ref(), junk)))
        .containsExactlyInAnyOrderEntriesOf(Map.of("ua", "", "ub", "", "junk", ""));
    assertThat(after.calls)
        .containsExactlyInAnyOrder(
            "release gpu-0 last", "release gpu-1 last", "release gpu-2 last");
    assertThat(cdiFiles()).isEmpty();
    assertThat(CheckpointStore.open(checkpoint, Clock.systemUTC()).all()).isEmpty();
  }
}
