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
 * What a test JVM killed with SIGKILL leaves behind, and its removal at the next start: records
 * (one per line: {@code pid <TAB> start ticks <TAB> executable <TAB> owner pid <TAB> owner start
 * ticks [<TAB> directory]...}) written when processes start, one file per owner (the JVM that
 * started them) in a directory of records; {@link #reap()} ends every recorded process of an owner
 * that is gone (so a demo or test run still going keeps its processes) that still runs the same
 * executable and started at the same tick (so a reused pid is never hit), and deletes the recorded
 * directories. An owner's file is written by that owner only and removed by the one run that reaps
 * it (a file lock), so runs beside each other never lose each other's records.
 *
 * <p>A start is the kernel's own count, {@code /proc/<pid>/stat}'s clock ticks after boot, not
 * {@code ProcessHandle.Info.startInstant()}: that adds a boot time each JVM reads once from {@code
 * /proc/stat}, whole seconds derived from the wall clock, so two JVMs can disagree by a second
 * about the same process (a clock step between their starts is enough) and a leftover would go
 * unreaped, or a live owner be taken for gone.
 *
 * <p>Directories are deleted only when their name matches {@code deletable}: the record is a file
 * anyone who can write its directory could edit, and deleting must never reach further than the
 * harness's own temporary directories.
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

  /**
   * The records of {@code kind} for every checkout of this user on this machine: in the cache
   * directory ({@code $KDRA_CACHE_DIR}, else {@code $XDG_CACHE_HOME/kdra} or {@code
   * ~/.cache/kdra}), which {@code mvn clean} and a removed checkout leave alone, and which only its
   * user may write (records name processes to kill).
   */
  public static Path machineWide(String kind) {
    return cacheDir().resolve("leftovers").resolve(kind);
  }

  /**
   * The lock file of network slot {@code slot} of {@code kind}: machine-wide, so that runs beside
   * each other see it whatever temporary directory each has ({@code bin/demo} gives its JVM one of
   * its own), or one run takes another's bridge for a killed run's and deletes it.
   */
  public static Path slotLock(String kind, int slot) {
    Path dir = machineWide(kind);
    try {
      java.nio.file.Files.createDirectories(dir);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return dir.resolve("slot-" + slot + ".lock");
  }

  /** The harness's cache of built binaries and images. */
  public static Path cacheDir() {
    String configured = System.getenv("KDRA_CACHE_DIR");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured);
    }
    String xdg = System.getenv("XDG_CACHE_HOME");
    Path base =
        xdg != null && !xdg.isBlank()
            ? Path.of(xdg)
            : Path.of(System.getProperty("user.home"), ".cache");
    return base.resolve("kdra");
  }

  /** An owner's file: {@code <owner pid>-<owner start ticks>.txt}. */
  private static final Pattern OWNER_FILE = Pattern.compile("(\\d+)-(\\d+)\\.txt");

  private final Path dir;
  private final Pattern deletable;

  /**
   * @param dir the directory of records (created when something is recorded)
   * @param deletable the names of the directories a reap may delete
   */
  public Leftovers(Path dir, Pattern deletable) {
    this.dir = dir;
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

  /** Appends records to their owners' files (created when missing). */
  public void record(List<Entry> entries) {
    java.util.Map<String, StringBuilder> byOwner = new java.util.LinkedHashMap<>();
    entries.forEach(
        e ->
            byOwner
                .computeIfAbsent(
                    e.owner() + "-" + e.ownerStarted() + ".txt", k -> new StringBuilder())
                .append(e.line())
                .append('\n'));
    try {
      if (!byOwner.isEmpty()) {
        Files.createDirectories(dir);
      }
      for (java.util.Map.Entry<String, StringBuilder> f : byOwner.entrySet()) {
        Files.writeString(
            dir.resolve(f.getKey()),
            f.getValue(),
            StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("recording in " + dir, e);
    }
  }

  /** Every record, of live owners and gone ones (torn lines left out). */
  public List<Entry> recorded() {
    List<Entry> all = new ArrayList<>();
    for (Path f : ownerFiles()) {
      try {
        Files.readAllLines(f).forEach(l -> Entry.parse(l).ifPresent(all::add));
      } catch (IOException e) {
        // reaped meanwhile
      }
    }
    return all;
  }

  /**
   * Ends the recorded processes of gone owners that still run (SIGKILL: a process left by a killed
   * JVM has no one to report to), deletes their directories and then their owners' files; the files
   * of live owners stay as they are. Returns what it ended.
   */
  public List<Entry> reap() {
    List<Entry> ended = new ArrayList<>();
    for (Path f : ownerFiles()) {
      java.util.regex.Matcher m = OWNER_FILE.matcher(f.getFileName().toString());
      if (!m.matches()
          || startTicks(Long.parseLong(m.group(1)))
              .equals(OptionalLong.of(Long.parseLong(m.group(2))))) {
        continue; // its owner runs
      }
      try (java.nio.channels.FileChannel channel =
              java.nio.channels.FileChannel.open(f, StandardOpenOption.WRITE);
          java.nio.channels.FileLock lock = channel.tryLock()) {
        if (lock == null || !Files.exists(f)) {
          continue; // another run reaps it now, or did
        }
        for (String line : Files.readAllLines(f)) {
          Entry.parse(line).ifPresent(e -> reap(e, ended));
        }
        Files.delete(f);
      } catch (java.nio.file.NoSuchFileException
          | java.nio.channels.OverlappingFileLockException e) {
        // reaped by another run, or by another thread of this one
      } catch (IOException e) {
        throw new UncheckedIOException("reaping what " + f + " records", e);
      }
    }
    return ended;
  }

  private void reap(Entry entry, List<Entry> ended) {
    entry
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
                        + entry.executable()
                        + ") survives SIGKILL",
                    e);
              }
              ended.add(entry);
            });
    for (Path d : entry.directories()) {
      if (d.getFileName() != null && deletable.matcher(d.getFileName().toString()).matches()) {
        TestFiles.deleteRecursively(d);
      }
    }
  }

  private List<Path> ownerFiles() {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (java.util.stream.Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> OWNER_FILE.matcher(f.getFileName().toString()).matches()).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
