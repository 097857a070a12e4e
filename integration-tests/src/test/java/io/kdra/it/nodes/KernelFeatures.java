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
 * {@code CONFIG_NFT_QUEUE} refuses: its rules go to the kernel as one batch, so the whole table is
 * refused (ENOENT) and nothing is enforced. Its verdicts come through the netlink queue, which such
 * a kernel may still have, reached by the xtables {@code NFQUEUE} target instead.
 */
public final class KernelFeatures {

  private static final Path CONFIG = Path.of("/proc/config.gz");

  private KernelFeatures() {}

  /** How packets reach kube-network-policies' queue on this kernel. */
  public enum PolicyQueue {
    /** Its own nftables rules do it. */
    NFT_QUEUE,
    /** Its rules are refused; an iptables {@code NFQUEUE} rule in each node does it instead. */
    XT_NFQUEUE,
    /** Nothing can: NetworkPolicy is not enforced. */
    NONE
  }

  /** Whether nftables' queue expression is there; true when the kernel does not say. */
  public static boolean nftQueue() {
    return policyQueue() == PolicyQueue.NFT_QUEUE;
  }

  /** This kernel's {@link PolicyQueue}; {@code NFT_QUEUE} when the kernel does not say. */
  public static PolicyQueue policyQueue() {
    if (!Files.isReadable(CONFIG)) {
      return PolicyQueue.NFT_QUEUE;
    }
    try (InputStream in = new GZIPInputStream(Files.newInputStream(CONFIG))) {
      return policyQueue(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      return PolicyQueue.NFT_QUEUE;
    }
  }

  /** The {@link PolicyQueue} of a kernel configuration ({@code /proc/config.gz}'s text). */
  static PolicyQueue policyQueue(String config) {
    if (nftQueue(config)) {
      return PolicyQueue.NFT_QUEUE;
    }
    return built(config, "CONFIG_NETFILTER_XT_TARGET_NFQUEUE")
        ? PolicyQueue.XT_NFQUEUE
        : PolicyQueue.NONE;
  }

  /**
   * Whether a kernel configuration ({@code /proc/config.gz}'s text) builds the queue expression.
   */
  public static boolean nftQueue(String config) {
    return built(config, "CONFIG_NFT_QUEUE");
  }

  private static boolean built(String config, String option) {
    return config.lines().anyMatch(l -> l.equals(option + "=y") || l.equals(option + "=m"));
  }
}
