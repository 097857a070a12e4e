package io.kdra.it.nodes;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * What the running kernel was built with, as far as the multi-node cluster cares: kube-network-
 * policies hands packets to itself with nftables' {@code queue} expression, which a kernel without
 * {@code CONFIG_NFT_QUEUE} refuses (every rule fails with ENOENT and nothing is enforced).
 */
public final class KernelFeatures {

  private static final Path CONFIG = Path.of("/proc/config.gz");

  private KernelFeatures() {}

  /** Whether nftables' queue expression is there; true when the kernel does not say. */
  public static boolean nftQueue() {
    if (!Files.isReadable(CONFIG)) {
      return true;
    }
    try (InputStream in = new GZIPInputStream(Files.newInputStream(CONFIG))) {
      return nftQueue(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      return true;
    }
  }

  /**
   * Whether a kernel configuration ({@code /proc/config.gz}'s text) builds the queue expression.
   */
  public static boolean nftQueue(String config) {
    return config
        .lines()
        .anyMatch(l -> l.equals("CONFIG_NFT_QUEUE=y") || l.equals("CONFIG_NFT_QUEUE=m"));
  }
}
