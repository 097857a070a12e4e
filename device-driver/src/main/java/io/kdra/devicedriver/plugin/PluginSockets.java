package io.kdra.devicedriver.plugin;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * Where the kubelet finds the driver: the registration socket, the DRA service socket and the lock
 * file that serialises plugin calls, named exactly as upstream's {@code kubeletplugin} helper names
 * them ({@code k8s.io/dynamic-resource-allocation} v0.37.2, {@code draplugin.go}).
 *
 * <p>Without a pod UID: {@code <registry>/<driver>-reg.sock} and {@code
 * <plugins>/<driver>/dra.sock}; a new instance replaces its predecessor's sockets, so the kubelet
 * has no driver in between. With the pod UID (a rolling update with surge, kubelet 1.33+): one
 * socket pair per pod, {@code <plugins>/<driver>/dra-<uid>.sock} and a registration socket from
 * {@link #rollingUpdateRegistrarSocketFile}, so the old and the new pod are registered side by side
 * and the kubelet always has one to call.
 *
 * @param registrationSocket the socket the kubelet's plugin watcher finds
 * @param draSocket the DRA service socket, reported to the kubelet as the endpoint
 * @param lockFile {@code <plugins>/<driver>/serialize.lock}, shared by every instance on the node
 * @param podUid the pod UID, empty when the sockets have fixed names
 */
public record PluginSockets(Path registrationSocket, Path draSocket, Path lockFile, String podUid) {
  /** The longest AF_UNIX socket path on Linux ({@code sun_path}), as upstream's unixPathMax. */
  static final int UNIX_PATH_MAX = 108;

  private static final int UID_HASH_BYTES = 8;
  private static final int DRIVER_UID_HASH_BYTES = 16;

  /**
   * @param podUid the driver pod's UID; null or blank for fixed socket names
   */
  public static PluginSockets of(
      String driverName, Path registryDir, Path pluginsDir, String podUid) {
    String uid = podUid == null ? "" : podUid.strip();
    Path dataDir = pluginsDir.resolve(driverName);
    if (uid.isEmpty()) {
      return new PluginSockets(
          registryDir.resolve(driverName + "-reg.sock"),
          dataDir.resolve("dra.sock"),
          dataDir.resolve("serialize.lock"),
          "");
    }
    return new PluginSockets(
        registryDir.resolve(rollingUpdateRegistrarSocketFile(registryDir, driverName, uid)),
        // the directory is the driver's own, so the UID alone makes the path unique
        dataDir.resolve("dra-" + uid + ".sock"),
        dataDir.resolve("serialize.lock"),
        uid);
  }

  /** Whether each pod has sockets of its own (a rolling update may overlap two pods). */
  public boolean perPod() {
    return !podUid.isEmpty();
  }

  /**
   * Upstream's {@code RollingUpdateRegistrarSocketFile}: the first of {@code
   * <driver>-<uid>-reg.sock}, {@code <driver>-<base64url(sha256(uid))[:8 bytes]>-reg.sock} and
   * {@code dra-<base64url(sha256(driver NUL uid))[:16 bytes]>-reg.sock} whose full path fits {@link
   * #UNIX_PATH_MAX}; the last one if none does.
   */
  static String rollingUpdateRegistrarSocketFile(Path registryDir, String driverName, String uid) {
    List<String> candidates =
        List.of(
            driverName + "-" + uid + "-reg.sock",
            driverName + "-" + base64(sha256(uid), UID_HASH_BYTES) + "-reg.sock",
            "dra-" + base64(sha256(driverName + "\0" + uid), DRIVER_UID_HASH_BYTES) + "-reg.sock");
    for (String basename : candidates) {
      if (utf8Length(registryDir.resolve(basename).toString()) <= UNIX_PATH_MAX) {
        return basename;
      }
    }
    return candidates.get(candidates.size() - 1);
  }

  private static int utf8Length(String s) {
    // Go's len() counts bytes
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }

  private static String base64(byte[] digest, int bytes) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, bytes));
  }
}
