package io.kdra.devicedriver.prepare;

import io.kdra.devicedriver.prepare.CheckpointCodec.CheckpointException;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import org.jboss.logging.Logger;

/**
 * The on-disk record of prepared claims (claim UID to {@link PreparedClaim}), in {@link
 * CheckpointCodec} format, replaced atomically with {@link AtomicFiles}.
 *
 * <p>Writes are group-committed: {@link #put} and {@link #remove} return only once a file that
 * contains their change is durable, but concurrent callers share one write. With 64 claims prepared
 * at once that is a handful of fsyncs instead of 64.
 *
 * <p>A damaged file (bad JSON, checksum mismatch, truncated) is moved aside to {@code
 * <file>.corrupt-<millis>} and the store starts empty, logging an error and remembering it ({@link
 * #damaged()}): a crash loop would help no one, and the driver rebuilds the entries from the CDI
 * specs. A file of an unknown version is refused: that is a downgrade, and rewriting the file would
 * lose the newer driver's state.
 *
 * <p>Two driver processes may share the file during a rolling update; they take turns under the
 * {@link SharedStateLock}, and the one that takes it calls {@link #reload} so that it works on what
 * the other wrote.
 *
 * <p>Thread-safe.
 */
public final class CheckpointStore {
  private static final Logger LOG = Logger.getLogger(CheckpointStore.class);

  private final Path file;
  private final Clock clock;
  private final FileWrites files;
  private final ReentrantLock writeLock = new ReentrantLock();
  private final TreeMap<String, PreparedClaim> claims = new TreeMap<>();
  private long version; // bumped by every change, guarded by this
  private long durableVersion; // highest version known to be on disk, guarded by writeLock
  private boolean damaged;
  // the file as this store last read or wrote it (identity, time, size); null when absent
  private Object seen; // guarded by this

  private CheckpointStore(Path file, Clock clock, FileWrites files) {
    this.file = file;
    this.clock = clock;
    this.files = files;
  }

  /**
   * Opens (or creates on first write) the checkpoint.
   *
   * @throws IOException when the file exists but cannot be read, or has an unknown version
   */
  public static CheckpointStore open(Path file, Clock clock) throws IOException {
    return open(file, clock, FileWrites.ATOMIC);
  }

  /**
   * As {@link #open(Path, Clock)}, writing through {@code files}: the checkpoint's, and the other
   * files of its directory ({@link #files()}).
   */
  public static CheckpointStore open(Path file, Clock clock, FileWrites files) throws IOException {
    CheckpointStore store = new CheckpointStore(file, clock, files);
    store.load();
    return store;
  }

  /** What {@link #reload} found. */
  public enum Reload {
    /** The file is as this store last read or wrote it. */
    UNCHANGED,
    /** Another process changed it; the store now holds what it says. */
    RELOADED,
    /** It was damaged: moved aside as at {@link #open}, the store is empty. */
    DAMAGED
  }

  /**
   * Reads the file again if another process changed it since this store last read or wrote it. Call
   * it only while no put or remove of this store is in flight (the {@link SharedStateLock}'s first
   * holder).
   *
   * @throws IOException when the file cannot be read or has an unknown version (the store keeps
   *     what it had)
   */
  public Reload reload() throws IOException {
    writeLock.lock();
    try {
      synchronized (this) {
        if (Objects.equals(stamp(), seen)) {
          return Reload.UNCHANGED;
        }
        boolean wasDamaged = damaged;
        TreeMap<String, PreparedClaim> before = new TreeMap<>(claims);
        claims.clear();
        damaged = false;
        try {
          load();
        } catch (IOException | RuntimeException e) {
          claims.putAll(before);
          damaged = wasDamaged;
          throw e;
        }
        Reload result = damaged ? Reload.DAMAGED : Reload.RELOADED;
        damaged |= wasDamaged;
        durableVersion = ++version;
        return result;
      }
    } finally {
      writeLock.unlock();
    }
  }

  /** The file's identity, modification time and size, which every atomic replacement changes. */
  private Object stamp() throws IOException {
    try {
      BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
      return List.of(String.valueOf(a.fileKey()), a.lastModifiedTime(), a.size());
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  private void load() throws IOException {
    seen = stamp();
    if (seen == null) {
      return;
    }
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (CharacterCodingException e) {
      // random bytes (a torn write, a disk's garbage): damage, as bad JSON is
      moveAside("not UTF-8 text");
      return;
    }
    try {
      claims.putAll(CheckpointCodec.decode(text));
    } catch (CheckpointException e) {
      if (!e.corrupt()) {
        throw new IOException("checkpoint " + file + ": " + e.getMessage());
      }
      moveAside(e.getMessage());
    }
  }

  private void moveAside(String why) throws IOException {
    Path aside = file.resolveSibling(file.getFileName() + ".corrupt-" + clock.millis());
    Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
    seen = null;
    damaged = true;
    LOG.errorf("checkpoint %s is damaged (%s); moved to %s and starting empty", file, why, aside);
  }

  public Path file() {
    return file;
  }

  /**
   * How the checkpoint's directory is written: the setup intents and device-metadata files beside
   * it share the checkpoint's disk.
   */
  public FileWrites files() {
    return files;
  }

  /**
   * Whether the file was damaged when opened (and the store started empty): its absence of a claim
   * then proves nothing, so no spec may be deleted for it.
   */
  public synchronized boolean damaged() {
    return damaged;
  }

  /** The claim with this UID, if prepared. */
  public synchronized Optional<PreparedClaim> get(String uid) {
    return Optional.ofNullable(claims.get(uid));
  }

  /** All prepared claims, sorted by UID. */
  public synchronized Map<String, PreparedClaim> all() {
    return new TreeMap<>(claims);
  }

  /**
   * Records a prepared claim durably. If the write fails the claim is not kept in memory either, so
   * a later prepare does not answer from state that never reached the disk.
   */
  public void put(PreparedClaim claim) throws IOException {
    long v;
    PreparedClaim previous;
    synchronized (this) {
      previous = claims.put(claim.claim().uid(), claim);
      v = ++version;
    }
    try {
      flush(v);
    } catch (IOException e) {
      synchronized (this) {
        if (claims.get(claim.claim().uid()) == claim) {
          if (previous == null) {
            claims.remove(claim.claim().uid());
          } else {
            claims.put(claim.claim().uid(), previous);
          }
          version++;
        }
      }
      throw e;
    }
  }

  /**
   * Forgets a claim durably; true if it was there. If the write fails the claim is kept in memory
   * too, as the file still holds it: the kubelet's retry then writes again instead of succeeding on
   * memory alone, which a restart would contradict.
   */
  public boolean remove(String uid) throws IOException {
    long v;
    PreparedClaim removed;
    synchronized (this) {
      removed = claims.remove(uid);
      if (removed == null) {
        return false;
      }
      v = ++version;
    }
    try {
      flush(v);
    } catch (IOException e) {
      synchronized (this) {
        if (!claims.containsKey(uid)) {
          claims.put(uid, removed);
          version++;
        }
      }
      throw e;
    }
    return true;
  }

  private void flush(long needed) throws IOException {
    writeLock.lock();
    try {
      if (durableVersion >= needed) {
        return; // another caller's write already included this change
      }
      String text;
      long snapshot;
      synchronized (this) {
        text = CheckpointCodec.encode(claims);
        snapshot = version;
      }
      try {
        files.write(file, text, true);
      } catch (IOException e) {
        throw new FileWriteException("checkpoint", file, e);
      }
      synchronized (this) {
        seen = stamp();
      }
      durableVersion = snapshot;
    } finally {
      writeLock.unlock();
    }
  }
}
