package io.kdra.computeclassbridge.mapping;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static io.kdra.computeclassbridge.TestData.defaultCatalog;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.kdra.computeclassbridge.model.Priority;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SharedDeviceClassesTest {

  private static DeviceClass l4For(String user) {
    return new ComputeClassMapper(MapperSettings.DEFAULTS)
        .map(computeClass(user, Priority.gpu("nvidia-l4", 1)), defaultCatalog(), List.of())
        .deviceClasses()
        .get(0);
  }

  @Test
  void addingAUserKeepsTheLiveOnesAndDropsVanishedOnes() {
    DeviceClass actual =
        new DeviceClassBuilder(SharedDeviceClasses.withUser(l4For("a"), l4For("a"), Set.of("a")))
            .editMetadata()
            .addToLabels(Labels.usedBy("gone"), "")
            .withResourceVersion("7")
            .endMetadata()
            .build();
    DeviceClass merged = SharedDeviceClasses.withUser(l4For("b"), actual, Set.of("a", "b"));
    assertThat(SharedDeviceClasses.usersOf(merged)).containsExactly("a", "b");
    assertThat(merged.getMetadata().getOwnerReferences())
        .extracting(OwnerReference::getName)
        .containsExactly("a", "b");
    assertThat(merged.getMetadata().getResourceVersion()).isEqualTo("7");
  }

  @Test
  void removingTheLastUserMeansDelete() {
    DeviceClass two = SharedDeviceClasses.withUser(l4For("b"), l4For("a"), Set.of("a", "b"));
    DeviceClass one = SharedDeviceClasses.withoutUser(two, "a").orElseThrow();
    assertThat(SharedDeviceClasses.usersOf(one)).containsExactly("b");
    assertThat(one.getMetadata().getOwnerReferences())
        .extracting(OwnerReference::getName)
        .containsExactly("b");
    assertThat(SharedDeviceClasses.withoutUser(one, "b")).isEmpty();
  }

  @Test
  void aMatchingLiveClassNeedsNoWrite() {
    DeviceClass live =
        new DeviceClassBuilder(l4For("a"))
            .editMetadata()
            .withResourceVersion("3")
            .withUid("u")
            .addToAnnotations("kubectl", "x")
            .endMetadata()
            .build();
    assertThat(
            JsonSubset.contains(live, SharedDeviceClasses.withUser(l4For("a"), live, Set.of("a"))))
        .isTrue();
    DeviceClass edited =
        new DeviceClassBuilder(live)
            .editSpec()
            .editFirstSelector()
            .editCel()
            .withExpression("true")
            .endCel()
            .endSelector()
            .endSpec()
            .build();
    assertThat(
            JsonSubset.contains(
                edited, SharedDeviceClasses.withUser(l4For("a"), edited, Set.of("a"))))
        .isFalse();
  }
}
