package io.kdra.it.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * What a test JVM killed with SIGKILL leaves behind, and its removal at the next start: a file of
 * records (one per line: {@code pid <TAB> start ticks <TAB> executable <TAB> owner pid <TAB> owner
 * start ticks [<TAB> directory]...}) written when processes start; {@link #reap()} ends every
 * recorded process that still runs the same executable and started at the same tick (so a reused
 * pid is never hit) and whose owner, the JVM that started it, is gone (so a demo or test run still
 * going in the same checkout keeps its processes), and deletes the recorded directories. Records of
 * live owners stay in the file.
 *
 * <p>A start is the kernel's own count, {@code /proc/<pid>/stat}'s clock ticks after boot, not
 * {@code ProcessHandle.Info.startInstant()}: that adds a boot time each JVM reads once from {@code
 * /proc/stat}, whole seconds derived from the wall clock, so two JVMs can disagree by a second
 * about the same process (a clock step between their starts is enough) and a leftover would go
 * unreaped, or a live owner be taken for gone.
 *
 * <p>Directories are deleted only when their name matches {@code deletable}: the record is a file
 * anyone could edit, and deleting must never reach further than the harness's own temporary
 * directories.
 */
public final class Leftovers {

  /** One recorded process and the directories that go with it. */
  public record Entry(
      long pid,
      long started,
      String executable,
      long owner,
      long ownerStarted,
      List<Path> directories) {

    String line() {
      StringBuilder b =
          new StringBuilder()
              .append(pid)
              .append('\t')
              .append(started)
              .append('\t')
              .append(executable)
              .append('\t')
              .append(owner)
              .append('\t')
              .append(ownerStarted);
      directories.forEach(d -> b.append('\t').append(d));
      return b.toString();
    }

    static Optional<Entry> parse(String line) {
      String[] f = line.split("\t");
      if (f.length < 5) {
        return Optional.empty();
      }
      try {
        List<Path> dirs = new ArrayList<>();
        for (int i = 5; i < f.length; i++) {
          dirs.add(Path.of(f[i]));
        }
        return Optional.of(
            new Entry(
                Long.parseLong(f[0]),
                Long.parseLong(f[1]),
                f[2],
                Long.parseLong(f[3]),
                Long.parseLong(f[4]),
                dirs));
      } catch (RuntimeException e) {
        return Optional.empty(); // a torn line from a crash while writing
      }
    }

    /** The process, if it is still the one recorded. */
    Optional<ProcessHandle> live() {
      return ProcessHandle.of(pid)
          .filter(
              h ->
                  startTicks(pid).equals(OptionalLong.of(started))
                      && h.info().command().map(executable::equals).orElse(false));
    }

    /** Whether the JVM that started the process still runs. */
    boolean ownerAlive() {
      return startTicks(owner).equals(OptionalLong.of(ownerStarted));
    }
  }

  /**
   * When the process started, in clock ticks after boot (field 22 of {@code /proc/<pid>/stat}), or
   * empty when it is gone. The fields are counted after the last {@code ')'}: the command name
   * before it may hold spaces and parentheses.
   */
  static OptionalLong startTicks(long pid) {
    String stat;
    try {
      stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    } catch (IOException | UncheckedIOException e) {
      return OptionalLong.empty();
    }
    String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    // after[0] is field 3 (state), so field 22 is after[19]
    return after.length > 19 ? OptionalLong.of(Long.parseLong(after[19])) : OptionalLong.empty();
  }

  private final Path file;
  private final Pattern deletable;

  public Leftovers(Path file, Pattern deletable) {
    this.file = file;
    this.deletable = deletable;
  }

  /** The record of a running process this JVM started, or empty when it has already ended. */
  public static Optional<Entry> entry(ProcessHandle process, List<Path> directories) {
    ProcessHandle.Info info = process.info();
    OptionalLong started = startTicks(process.pid());
    long self = ProcessHandle.current().pid();
    if (started.isEmpty() || info.command().isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        new Entry(
            process.pid(),
            started.getAsLong(),
            info.command().get(),
            self,
            startTicks(self).orElseThrow(),
            List.copyOf(directories)));
  }

  /**
   * The record of directories that {@code owner} (a running JVM) made and that no process of its
   * own holds yet: deleted once the owner is gone, so that a JVM killed between making a directory
   * and starting the processes that use it leaves none.
   */
  public static Entry directoriesOf(ProcessHandle owner, List<Path> directories) {
    long started = startTicks(owner.pid()).orElseThrow();
    return new Entry(
        owner.pid(),
        started,
        owner.info().command().orElse("?"),
        owner.pid(),
        started,
        List.copyOf(directories));
  }

  /** Appends records (the file is created when missing). */
  public void record(List<Entry> entries) {
    if (entries.isEmpty()) {
      return;
    }
    StringBuilder text = new StringBuilder();
    entries.forEach(e -> text.append(e.line()).append('\n'));
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.writeString(file, text, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException("recording " + file, e);
    }
  }

  /**
   * Ends the recorded processes of gone owners that still run (SIGKILL: a process left by a killed
   * JVM has no one to report to) and deletes their directories; the record keeps only the entries
   * of live owners. Returns what it ended.
   */
  public List<Entry> reap() {
    if (!Files.exists(file)) {
      return List.of();
    }
    List<Entry> ended = new ArrayList<>();
    List<Entry> kept = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(file)) {
        Optional<Entry> entry = Entry.parse(line);
        if (entry.isEmpty()) {
          continue;
        }
        if (entry.get().ownerAlive()) {
          kept.add(entry.get());
          continue;
        }
        entry
            .get()
            .live()
            .ifPresent(
                h -> {
                  h.destroyForcibly();
                  try {
                    h.onExit().get(10, TimeUnit.SECONDS);
                  } catch (Exception e) {
                    throw new IllegalStateException(
                        "leftover process "
                            + h.pid()
                            + " ("
                            + entry.get().executable()
                            + ") survives SIGKILL",
                        e);
                  }
                  ended.add(entry.get());
                });
        for (Path dir : entry.get().directories()) {
          if (dir.getFileName() != null
              && deletable.matcher(dir.getFileName().toString()).matches()) {
            TestFiles.deleteRecursively(dir);
          }
        }
      }
      Files.delete(file);
      record(kept);
    } catch (IOException e) {
      throw new UncheckedIOException("reaping what " + file + " records", e);
    }
    return ended;
  }
}
