package io.kdra.devicedriver.plugin;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.UUID;

/**
 * Which server instance a socket file belongs to: a hidden marker {@code .<socket>.owner} beside it
 * (the kubelet's plugin watcher ignores dot files) names the instance that bound it last. Binding
 * and removing happen under an exclusive lock on the marker, so an instance that stops after its
 * replacement bound the same name (fixed socket names) leaves the replacement's socket alone.
 *
 * <p>A socket is bound at a hidden temporary name and renamed into place: the name never points at
 * nothing while a replacement takes over, and the file Netty removes when its server closes is that
 * temporary name (long gone), not the name a replacement may have bound since.
 */
final class SocketOwnership {
  // a JVM refuses to lock one file twice (OverlappingFileLockException): two servers in one JVM
  // (tests) take turns here first
  private static final Object IN_THIS_JVM = new Object();

  @FunctionalInterface
  interface Bind<T> {
    T bind(Path at) throws IOException;
  }

  private final String token = UUID.randomUUID().toString();
  private final boolean perPod;

  /**
   * @param perPod whether the socket names are this pod's alone (then the marker goes with the
   *     socket; a fixed name's marker stays, emptied, for the next instance to lock)
   */
  SocketOwnership(boolean perPod) {
    this.perPod = perPod;
  }

  /** Replaces whatever is at {@code socket} with what {@code bind} creates, marked as ours. */
  <T> T bind(Path socket, Bind<T> bind) throws IOException {
    synchronized (IN_THIS_JVM) {
      Files.createDirectories(socket.getParent());
      try (FileChannel marker = open(socket);
          FileLock lock = marker.lock()) {
        marker.truncate(0);
        marker.write(ByteBuffer.wrap(token.getBytes(StandardCharsets.UTF_8)), 0);
        // short: a socket path must fit in 108 bytes
        Path temporary = socket.resolveSibling("." + token.replace("-", "").substring(0, 12));
        Files.deleteIfExists(temporary);
        T bound = bind.bind(temporary);
        // replaces a socket file left by a killed predecessor, or the one a predecessor serves
        Files.move(
            temporary, socket, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return bound;
      }
    }
  }

  /**
   * Removes the socket and its marker if this instance bound it last.
   *
   * @return false when another instance owns it now, or nothing marks it as anyone's (both are left
   *     alone)
   */
  boolean removeIfOurs(Path socket) throws IOException {
    Path markerFile = marker(socket);
    synchronized (IN_THIS_JVM) {
      if (!Files.exists(markerFile)) {
        return false; // not bound by us, or its marker was removed: proves nothing
      }
      try (FileChannel marker = open(socket);
          FileLock lock = marker.lock()) {
        ByteBuffer buf = ByteBuffer.allocate(128);
        marker.read(buf, 0);
        String owner = new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
        if (!owner.equals(token)) {
          return false;
        }
        Files.deleteIfExists(socket);
        if (perPod) {
          Files.deleteIfExists(markerFile);
        } else {
          // emptied, not deleted: a replacement may be waiting for this very lock
          marker.truncate(0);
        }
        return true;
      }
    }
  }

  private static FileChannel open(Path socket) throws IOException {
    return FileChannel.open(
        marker(socket),
        StandardOpenOption.CREATE,
        StandardOpenOption.READ,
        StandardOpenOption.WRITE);
  }

  static Path marker(Path socket) {
    return socket.resolveSibling("." + socket.getFileName() + ".owner");
  }
}
