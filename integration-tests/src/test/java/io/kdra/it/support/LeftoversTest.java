package io.kdra.it.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reaper of what a killed test JVM leaves behind, on real {@code sleep} processes. */
class LeftoversTest {

  @TempDir Path dir;
  private final List<Process> started = new ArrayList<>();

  private Process spawn(String... command) throws Exception {
    Process p = new ProcessBuilder(command).start();
    started.add(p);
    // the record needs the process's command line
    return ProcessStart.awaitExec(p);
  }

  @AfterEach
  void end() {
    started.forEach(
        p -> {
          p.descendants().forEach(ProcessHandle::destroyForcibly);
          p.destroyForcibly();
        });
  }

  /** A record as the JVM that started the process would have written it before it was killed. */
  private Leftovers.Entry orphaned(Process process, List<Path> dirs) {
    Leftovers.Entry e = Leftovers.entry(process.toHandle(), dirs).orElseThrow();
    return new Leftovers.Entry(e.pid(), e.started(), e.executable(), deadPid, 0L, e.directories());
  }

  private long deadPid;

  @org.junit.jupiter.api.BeforeEach
  void aGoneOwner() throws Exception {
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor(10, TimeUnit.SECONDS);
    deadPid = gone.pid();
  }

  private Leftovers leftovers() {
    return new Leftovers(dir.resolve("records"), Pattern.compile("etcd(data|wal)[0-9]+"));
  }

  @Test
  void aRecordedProcessThatStillRunsIsEndedAndTheRecordRemoved() throws Exception {
    Process sleep = spawn("sleep", "300");
    leftovers().record(List.of(orphaned(sleep, List.of())));

    List<Leftovers.Entry> ended = leftovers().reap();

    assertThat(ended).extracting(Leftovers.Entry::pid).containsExactly(sleep.pid());
    assertThat(sleep.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(leftovers().recorded()).isEmpty();
    assertThat(dir.resolve("records")).isEmptyDirectory();
    assertThat(leftovers().reap()).isEmpty();
  }

  @Test
  void aProcessRecordedAsSoonAsItStartedIsRecognisedLater() throws Exception {
    // as ServiceProcess records its services: right after ProcessBuilder.start(), no wait
    Process sleep = new ProcessBuilder("sleep", "300").start();
    started.add(sleep);
    Leftovers.Entry e = Leftovers.entry(sleep.toHandle(), List.of()).orElseThrow();
    leftovers()
        .record(
            List.of(
                new Leftovers.Entry(e.pid(), e.started(), e.executable(), deadPid, 0L, List.of())));

    assertThat(leftovers().reap()).extracting(Leftovers.Entry::pid).containsExactly(sleep.pid());
    assertThat(sleep.waitFor(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aProgramWhoseNameHoldsParenthesesAndSpacesIsRecognised() throws Exception {
    // /proc/<pid>/stat puts the name in parentheses before the start: it must not shift the fields
    Path odd = dir.resolve("sl) 1 2 (p");
    Files.copy(Path.of("/bin/sleep"), odd);
    odd.toFile().setExecutable(true);
    Process sleep = spawn(odd.toString(), "300");
    leftovers().record(List.of(orphaned(sleep, List.of())));

    assertThat(leftovers().reap()).extracting(Leftovers.Entry::pid).containsExactly(sleep.pid());
    assertThat(sleep.waitFor(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aPidNowUsedByAnotherProcessIsLeftAlone() throws Exception {
    Process sleep = spawn("sleep", "300");
    Leftovers.Entry real = orphaned(sleep, List.of());
    // the same pid, but started at another time or running another program: not ours any more
    leftovers()
        .record(
            List.of(
                new Leftovers.Entry(
                    real.pid(),
                    real.started() - 500,
                    real.executable(),
                    real.owner(),
                    real.ownerStarted(),
                    List.of()),
                new Leftovers.Entry(
                    real.pid(),
                    real.started(),
                    "/usr/bin/etcd",
                    real.owner(),
                    real.ownerStarted(),
                    List.of())));

    assertThat(leftovers().reap()).isEmpty();
    assertThat(sleep.isAlive()).isTrue();
  }

  @Test
  void theProcessesOfARunThatStillGoesOnAreLeftAloneAndStayRecorded() throws Exception {
    Process sleep = spawn("sleep", "300");
    Path data = Files.createDirectories(dir.resolve("etcddata7"));
    // recorded by this JVM, which is alive: a demo next to a test run, say
    leftovers().record(List.of(Leftovers.entry(sleep.toHandle(), List.of(data)).orElseThrow()));

    assertThat(leftovers().reap()).isEmpty();
    assertThat(sleep.isAlive()).isTrue();
    assertThat(data).exists();
    assertThat(leftovers().recorded())
        .singleElement()
        .extracting(Leftovers.Entry::pid)
        .isEqualTo(sleep.pid());
  }

  @Test
  void onlyRecordedDirectoriesWithTheExpectedNameAreDeleted() throws Exception {
    Path data = Files.createDirectories(dir.resolve("etcddata123/member"));
    Path wal = Files.createDirectories(dir.resolve("etcdwal456"));
    Path precious = Files.createDirectories(dir.resolve("home"));
    Files.writeString(data.resolve("db"), "x");
    Process gone = spawn("true");
    gone.waitFor(10, TimeUnit.SECONDS);
    leftovers()
        .record(
            List.of(
                new Leftovers.Entry(
                    gone.pid(),
                    0L,
                    "/bin/true",
                    deadPid,
                    0L,
                    List.of(dir.resolve("etcddata123"), wal, precious))));

    assertThat(leftovers().reap()).isEmpty(); // the process itself is long gone
    assertThat(dir.resolve("etcddata123")).doesNotExist();
    assertThat(wal).doesNotExist();
    assertThat(precious).exists();
  }

  @Test
  void aDirectoryRecordedByItsOwnerAloneGoesWhenTheOwnerIsGoneNotBefore() throws Exception {
    Process owner = spawn("sleep", "300");
    Path data = Files.createDirectories(dir.resolve("etcddata9/member"));
    leftovers()
        .record(
            List.of(Leftovers.directoriesOf(owner.toHandle(), List.of(dir.resolve("etcddata9")))));

    assertThat(leftovers().reap()).isEmpty();
    assertThat(data).as("its owner runs").exists();
    assertThat(owner.isAlive()).isTrue();

    owner.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    assertThat(leftovers().reap()).as("the owner itself is no leftover to end").isEmpty();
    assertThat(dir.resolve("etcddata9")).doesNotExist();
  }

  @Test
  void aRunFindsTheRecordsOfKilledRunsAndLeavesThoseOfRunsGoingOnAsTheyAre() throws Exception {
    Process mine = spawn("sleep", "300");
    Process theirs = spawn("sleep", "300");
    Process owner = spawn("sleep", "300");
    // a run going on beside this one (its own file), and a killed one
    Leftovers.Entry live = Leftovers.entry(theirs.toHandle(), List.of()).orElseThrow();
    leftovers()
        .record(
            List.of(
                new Leftovers.Entry(
                    live.pid(),
                    live.started(),
                    live.executable(),
                    owner.pid(),
                    Leftovers.directoriesOf(owner.toHandle(), List.of()).started(),
                    List.of()),
                orphaned(mine, List.of())));
    assertThat(leftovers().recorded()).hasSize(2);

    assertThat(leftovers().reap()).extracting(Leftovers.Entry::pid).containsExactly(mine.pid());
    assertThat(theirs.isAlive()).isTrue();
    assertThat(leftovers().recorded())
        .extracting(Leftovers.Entry::pid)
        .containsExactly(theirs.pid());
  }

  @Test
  void tornOrForeignLinesAreSkipped() throws Exception {
    Files.createDirectories(dir.resolve("records"));
    Path torn = dir.resolve("records").resolve(deadPid + "-0.txt");
    Files.writeString(torn, "12345\tnot-an-instant\t/x\t1\tnot-either\n\n999\n");
    assertThat(leftovers().reap()).isEmpty();
    assertThat(torn).doesNotExist();
  }
}
