package io.kdra.core.validation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.kdra.core.testing.Fixtures;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ValidatorTest {

  /** An object with its name removed, so that exactly one error names the kind it went to. */
  static Stream<Named<HasMetadata>> unnamed() {
    return Stream.<HasMetadata>of(
            Fixtures.slice(),
            Fixtures.claim(),
            Fixtures.deviceClass(),
            new ResourceClaimTemplateBuilder()
                .withNewMetadata()
                .withNamespace("ns")
                .endMetadata()
                .withNewSpec()
                .withSpec(Fixtures.claim().getSpec())
                .endSpec()
                .build())
        .peek(o -> o.getMetadata().setName(null))
        .map(o -> Named.of(o.getKind(), o));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unnamed")
  void dispatchesByKind(HasMetadata object) {
    assertThat(Validator.validate(object))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.object().kind()).isEqualTo(object.getKind());
              assertThat(e.field()).isEqualTo("metadata.name");
            });
  }

  @Test
  void rejectsOtherKinds() {
    assertThatThrownBy(() -> Validator.validate(new PodBuilder().build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Pod");
  }
}
