package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.ScoreFixtures.named;
import static io.kdra.claimcontroller.domain.ScoreFixtures.node;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pairs;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pod;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.fabric8.kubernetes.api.model.ContainerImage;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Upstream's {@code TestImageLocalityPriority}: its node images, pods and expected scores. */
class ImageLocalityScoreTest {

  static final long MB = 1024 * 1024;

  static Node withImages(String name, ContainerImage... images) {
    return node(name).editStatus().withImages(images).endStatus().build();
  }

  static ContainerImage image(long size, String... names) {
    return new ContainerImage(List.of(names), size);
  }

  /** Upstream's node403002000: gcr.io/40:latest 40MB, gcr.io/300:latest 300MB, gcr.io/2000 2GB. */
  static final Node NODE_403002000 =
      withImages(
          "node1",
          image(40 * MB, "gcr.io/40:latest", "gcr.io/40:v1"),
          image(300 * MB, "gcr.io/300:latest", "gcr.io/300:v1"),
          image(2000 * MB, "gcr.io/2000:latest"));

  /** Upstream's node25010: gcr.io/250:latest 250MB, gcr.io/10:latest 10MB. */
  static final Node NODE_25010 =
      withImages(
          "node2",
          image(250 * MB, "gcr.io/250:latest"),
          image(10 * MB, "gcr.io/10:latest", "gcr.io/10:v1"));

  static Pod containers(String... images) {
    var b = pod("p");
    for (int i = 0; i < images.length; i++) {
      b.editSpec()
          .addNewContainer()
          .withName("c" + i)
          .withImage(images[i])
          .endContainer()
          .endSpec();
    }
    return b.build();
  }

  Map<String, String> score(Pod pod, List<Node> nodes) {
    Map<String, String> got = new LinkedHashMap<>();
    named(nodes, ImageLocalityScore.score(pod, nodes, nodes)).forEach((k, v) -> got.put(k, "" + v));
    return got;
  }

  /**
   * "two images spread on two nodes, prefer the larger image one": gcr.io/40 and gcr.io/250; node1
   * has 40MB (spread 1/2: 20MB, under the 23MB minimum: 0), node2 250MB (125MB: (125-23) * 100 /
   * (2000-23) = 5).
   */
  @Test
  void twoImagesSpreadOnTwoNodesPreferTheLargerImageOne() {
    List<Node> nodes = List.of(NODE_403002000, NODE_25010);
    assertEquals(
        pairs("node1", "0", "node2", "5"), score(containers("gcr.io/40", "gcr.io/250"), nodes));
  }

  /** "two images on one node, prefer this node": gcr.io/40 and gcr.io/300 (170MB): 7. */
  @Test
  void twoImagesOnOneNodePreferThisNode() {
    List<Node> nodes = List.of(NODE_403002000, NODE_25010);
    assertEquals(
        pairs("node1", "7", "node2", "0"), score(containers("gcr.io/40", "gcr.io/300"), nodes));
  }

  /** Upstream's node400030: gcr.io/4000:latest 4000MB, gcr.io/30:latest 30MB. */
  static final Node NODE_400030 =
      withImages(
          "node1", image(4000 * MB, "gcr.io/4000:latest"), image(30 * MB, "gcr.io/30:latest"));

  /** "if exceed limit, use limit": gcr.io/10 and gcr.io/4000. */
  @Test
  void ifExceedLimitUseLimit() {
    List<Node> nodes = List.of(NODE_400030, NODE_25010);
    assertEquals(
        pairs("node1", "100", "node2", "0"), score(containers("gcr.io/10", "gcr.io/4000"), nodes));
  }

  @Test
  void nodesWithoutImagesAreNotScored() {
    assertNull(
        ImageLocalityScore.score(
            containers("busybox"), List.of(node("a").build()), List.of(node("a").build())));
  }
}
