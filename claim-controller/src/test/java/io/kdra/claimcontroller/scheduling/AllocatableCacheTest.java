package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.List;
import org.junit.jupiter.api.Test;

class AllocatableCacheTest {

  static Node node(String name, String cpu) {
    return new NodeBuilder().withNewMetadata().withName(name).endMetadata().withNewStatus()
        .addToAllocatable("cpu", new Quantity(cpu)).addToAllocatable("memory",
            new Quantity("1Gi")).endStatus().build();
  }

  @Test
  void eachNodeObjectIsParsedOnceAndAReplacedObjectAgain() {
    AllocatableCache cache = new AllocatableCache();
    Node a = node("a", "8");
    Node b = node("b", "4");
    cache.refresh(List.of(a, b));
    assertThat(cache.of(a).cpu().compareTo(io.kdra.core.model.Quantity.parse("8"))).isZero();
    assertThat(cache.of(b).memory().asLong()).isEqualTo(1L << 30);
    cache.refresh(List.of(a, b));
    cache.of(a);
    assertThat(cache.parses()).isEqualTo(2);

    // the informer replaced node a (its allocatable changed): the new object is parsed
    Node a2 = node("a", "2");
    cache.refresh(List.of(a2, b));
    assertThat(cache.of(a2).cpu().compareTo(io.kdra.core.model.Quantity.parse("2"))).isZero();
    assertThat(cache.parses()).isEqualTo(3);
  }

  @Test
  void aNodeNotRefreshedIsParsedOnTheSpot() {
    AllocatableCache cache = new AllocatableCache();
    assertThat(cache.of(node("x", "500m")).cpu()
        .compareTo(io.kdra.core.model.Quantity.parse("500m"))).isZero();
  }
}
