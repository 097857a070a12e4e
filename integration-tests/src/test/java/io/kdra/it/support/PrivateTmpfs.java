package io.kdra.it.support;

import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A small tmpfs mounted over a directory inside a private mount namespace of its own: a disk that a
 * test can fill for one service, which nothing else on the machine sees. It cannot outlive the
 * test: the namespace is held by a process that ends when this JVM's pipe to it closes ({@link
 * #close}, or this JVM killed), and the kernel drops the mount with the namespace's last process (a
 * service that {@link #enter}ed it ends with its run, or is reaped as a leftover by the next).
 * Needs root ({@code unshare}, {@code nsenter}, {@code mount}).
 */
public final class PrivateTmpfs implements AutoCloseable {
  /** tmpfs hands out whole pages: a file of one byte takes one. */
  public static final int PAGE = 4096;

  private static final String FILLER = ".filler";

  private final Path dir;
  private final String size;
  private Process holder; // guarded by this; null until first needed

  private PrivateTmpfs(Path dir, String size) {
    this.dir = dir;
    this.size = size;
  }

  /**
   * A tmpfs of {@code size} (as mount's {@code size=}, e.g. {@code 256k}) over {@code dir} (made if
   * missing) in a new mount namespace, mounted when first needed: a test class can name it in its
   * static fields and still be skipped where it cannot run (not root).
   */
  public static PrivateTmpfs over(Path dir, String size) {
    return new PrivateTmpfs(dir.toAbsolutePath(), size);
  }

  private synchronized Process holder() {
    if (holder == null) {
      holder = mount(dir, size);
    }
    return holder;
  }

  private static Process mount(Path absolute, String size) {
    try {
      Files.createDirectories(absolute);
      Process holder =
          new ProcessBuilder(
                  "unshare",
                  "--mount",
                  "--propagation",
                  "private",
                  "--",
                  "sh",
                  "-c",
                  // holds the namespace until its stdin, this JVM's pipe, closes
                  "mount -t tmpfs -o size=\"$2\",mode=0700 kdra-test-tmpfs \"$1\""
                      + " && echo mounted && exec cat >/dev/null",
                  "sh",
                  absolute.toString(),
                  size)
              .redirectErrorStream(true)
              .start();
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      String first = out.readLine();
      if (!"mounted".equals(first)) {
        holder.destroyForcibly();
        throw new IllegalStateException(
            "cannot mount a private tmpfs over " + absolute + ": " + first);
      }
      return holder;
    } catch (IOException e) {
      throw new UncheckedIOException("mounting a private tmpfs over " + absolute, e);
    }
  }

  /** The directory the tmpfs is mounted over (inside the namespace). */
  public Path dir() {
    return dir;
  }

  /** The command prefix that runs a program inside the namespace ({@code nsenter} execs it). */
  public List<String> enter() {
    return List.of("nsenter", "--target", Long.toString(holder().pid()), "--mount", "--");
  }

  /** Whether {@code process} runs inside the namespace. */
  public boolean holds(ProcessHandle process) {
    try {
      return Files.readSymbolicLink(nsOf(process.pid()))
          .equals(Files.readSymbolicLink(nsOf(holder().pid())));
    } catch (IOException e) {
      return false; // ended, or not yet there
    }
  }

  private static Path nsOf(long pid) {
    return Path.of("/proc", Long.toString(pid), "ns", "mnt");
  }

  /**
   * {@code path} (under {@link #dir}) as this JVM reaches it from outside the namespace, through
   * the holder's root ({@code /proc/<pid>/root}).
   */
  public Path fromOutside(Path path) {
    return Path.of("/proc", Long.toString(holder().pid()), "root")
        .resolve(Path.of("/").relativize(path.toAbsolutePath()));
  }

  /**
   * Fills the tmpfs but {@code pagesLeft} pages: a filler file grows a page at a time until the
   * kernel says {@code ENOSPC}, then gives back that many.
   */
  public void fill(int pagesLeft) {
    Path filler = fromOutside(dir.resolve(FILLER));
    try (FileChannel ch =
        FileChannel.open(filler, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      ch.position(ch.size());
      ByteBuffer page = ByteBuffer.allocate(PAGE);
      while (true) {
        page.clear();
        try {
          while (page.hasRemaining()) {
            ch.write(page);
          }
        } catch (IOException full) {
          break;
        }
      }
      // a page the kernel refused half-way is no page: whole pages only
      long whole = ch.size() / PAGE * PAGE;
      ch.truncate(Math.max(0, whole - (long) pagesLeft * PAGE));
    } catch (IOException e) {
      throw new UncheckedIOException("filling " + filler, e);
    }
  }

  /** Gives back all the space {@link #fill} took. */
  public void free() {
    try {
      Files.deleteIfExists(fromOutside(dir.resolve(FILLER)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Ends the holder; the mount goes with the last process in the namespace. */
  @Override
  public synchronized void close() {
    if (holder == null) {
      return;
    }
    try {
      holder.getOutputStream().close();
      if (!holder.waitFor(10, TimeUnit.SECONDS)) {
        holder.destroyForcibly();
      }
    } catch (IOException e) {
      holder.destroyForcibly();
    } catch (InterruptedException e) {
      holder.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  /** Waits until {@code process} has entered the namespace and exec'd {@code java} (or ended). */
  public void awaitEntered(Process process) {
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(10))
        .until(
            () ->
                !process.isAlive()
                    || (holds(process.toHandle())
                        && process.info().command().map(c -> c.endsWith("/java")).orElse(false)));
  }
}
