package io.kdra.slicepublisher.domain;

import io.kdra.core.validation.Limits;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Stable slice names: {@code <pool>-<driver>-<index>}, with slashes of network pool names turned
 * into dashes. Stable names (rather than upstream's generateName) make a duplicate create
 * impossible: a create that races with a stale cache fails with AlreadyExists instead of publishing
 * the same devices twice.
 *
 * <p>Names longer than a DNS subdomain allows (253) are cut and get a hash of the full name, so
 * they stay unique and stable.
 */
public final class SliceNames {

  /** Longest ResourceSlice name (a DNS subdomain). */
  public static final int MAX_NAME_LENGTH = Limits.DNS1123_SUBDOMAIN_MAX_LENGTH;

  private static final int HASH_CHARS = 10;

  private SliceNames() {}

  /** The name of slice {@code index} of pool {@code pool} of {@code driver}. Pure. */
  public static String name(String driver, String pool, int index) {
    String base = (pool.replace('/', '-') + "-" + driver).toLowerCase(Locale.ROOT);
    String suffix = "-" + index;
    if (base.length() + suffix.length() <= MAX_NAME_LENGTH) {
      return base + suffix;
    }
    String hash = hash(base);
    int keep = MAX_NAME_LENGTH - suffix.length() - hash.length() - 1;
    String cut = base.substring(0, keep).replaceAll("[-.]+$", "");
    return cut + "-" + hash + suffix;
  }

  private static String hash(String text) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest).substring(0, HASH_CHARS);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is always present", e);
    }
  }
}
