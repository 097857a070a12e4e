package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.List;
import org.junit.jupiter.api.Test;

class AllocatableCacheTest {

  static Node node(String name, String cpu) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewStatus()
        .addToAllocatable("cpu", new Quantity(cpu))
        .addToAllocatable("memory", new Quantity("1Gi"))
        .addToAllocatable("pods", new Quantity("110"))
        .endStatus()
        .build();
  }

  static io.kdra.core.model.Quantity cores(String text) {
    return io.kdra.core.model.Quantity.parse(text);
  }

  @Test
  void eachNodeObjectIsParsedOnceAndAReplacedObjectAgain() {
    AllocatableCache cache = new AllocatableCache();
    Node a = node("a", "8");
    Node b = node("b", "4");
    cache.refresh(List.of(a, b));
    assertThat(cache.of(a).requests().cpu().compareTo(cores("8"))).isZero();
    assertThat(cache.of(b).requests().memory().asLong()).isEqualTo(1L << 30);
    assertThat(cache.of(b).pods()).isEqualTo(110);
    cache.refresh(List.of(a, b));
    cache.of(a);
    assertThat(cache.parses()).isEqualTo(2);

    // the informer replaced node a (its allocatable changed): the new object is parsed
    Node a2 = node("a", "2");
    cache.refresh(List.of(a2, b));
    assertThat(cache.of(a2).requests().cpu().compareTo(cores("2"))).isZero();
    assertThat(cache.parses()).isEqualTo(3);
  }

  @Test
  void aNodeNotRefreshedIsParsedOnTheSpot() {
    AllocatableCache cache = new AllocatableCache();
    assertThat(cache.of(node("x", "500m")).requests().cpu().compareTo(cores("500m"))).isZero();
  }
}
