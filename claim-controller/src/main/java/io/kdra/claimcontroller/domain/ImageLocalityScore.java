package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerImage;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * kube-scheduler's ImageLocality score ({@code imagelocality/image_locality.go}): a node scores by
 * the sizes of the pod's images (containers, init containers, image volumes) it already has in
 * {@code status.images}, each scaled by the share of all nodes that have it (so that a widely
 * spread image does not draw every pod to one node), clamped between 23 MiB and 1000 MiB per image
 * and scaled to 0..100. Names are compared as upstream: a reference without a tag gets {@code
 * :latest}. Not normalised further. When no feasible node reports images every node scores 0: not
 * scored. Pure.
 */
final class ImageLocalityScore {

  private static final long MB = 1024 * 1024;
  private static final long MIN_THRESHOLD = 23 * MB;
  private static final long MAX_CONTAINER_THRESHOLD = 1000 * MB;

  private ImageLocalityScore() {}

  /**
   * Scores in {@code nodes}' order, or null when none of them reports images.
   *
   * @param allNodes every node, to count how many have each image
   */
  static long[] score(Pod pod, List<Node> nodes, List<Node> allNodes) {
    if (nodes.stream().allMatch(n -> images(n).isEmpty())) {
      return null;
    }
    List<String> wanted = new ArrayList<>();
    for (Container c : list(pod.getSpec().getInitContainers())) {
      wanted.add(normalized(c.getImage()));
    }
    for (Container c : list(pod.getSpec().getContainers())) {
      wanted.add(normalized(c.getImage()));
    }
    for (Volume v : list(pod.getSpec().getVolumes())) {
      if (v.getImage() != null) {
        wanted.add(normalized(v.getImage().getReference()));
      }
    }
    Set<String> names = new HashSet<>(wanted);
    Map<String, Integer> nodesWith = new HashMap<>();
    for (Node n : allNodes) {
      Set<String> seen = new HashSet<>();
      for (ContainerImage image : images(n)) {
        for (String name : list(image.getNames())) {
          if (names.contains(name) && seen.add(name)) {
            nodesWith.merge(name, 1, Integer::sum);
          }
        }
      }
    }
    long[] out = new long[nodes.size()];
    for (int i = 0; i < out.length; i++) {
      Map<String, Long> sizes = new HashMap<>();
      for (ContainerImage image : images(nodes.get(i))) {
        for (String name : list(image.getNames())) {
          if (names.contains(name)) {
            sizes.put(name, image.getSizeBytes() == null ? 0 : image.getSizeBytes());
          }
        }
      }
      long sum = 0;
      for (String name : wanted) {
        Long size = sizes.get(name);
        if (size != null) {
          double spread = (double) nodesWith.get(name) / (double) allNodes.size();
          sum += (long) (size * spread);
        }
      }
      out[i] = priority(sum, wanted.size());
    }
    return out;
  }

  /** Upstream's {@code calculatePriority}. */
  static long priority(long sum, int images) {
    long max = MAX_CONTAINER_THRESHOLD * images;
    long clamped = Math.max(MIN_THRESHOLD, Math.min(sum, max));
    if (max <= MIN_THRESHOLD) {
      return 0;
    }
    return NodeScoring.MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) / (max - MIN_THRESHOLD);
  }

  /** Upstream's {@code normalizedImageName}. */
  static String normalized(String name) {
    if (name == null) {
      return "";
    }
    return name.lastIndexOf(':') <= name.lastIndexOf('/') ? name + ":latest" : name;
  }

  private static List<ContainerImage> images(Node n) {
    return n.getStatus() == null || n.getStatus().getImages() == null
        ? List.of()
        : n.getStatus().getImages();
  }

  private static <T> List<T> list(List<T> l) {
    return l == null ? List.of() : l;
  }
}
