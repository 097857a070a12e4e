package io.kdra.kubectl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.channels.UnresolvedAddressException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The small pure pieces: table layout, target names, error lines. */
class TextTest {

  @Test
  void tablesAreAlignedAsKubectlPrintsThem() {
    assertThat(new Table("NODE", "RESULT").row("node-a", "fits").row("n", "").lines())
        .containsExactly("NODE     RESULT", "node-a   fits", "n        <none>");
  }

  @ParameterizedTest
  @CsvSource({
    "pod/x,POD,x",
    "pods/x,POD,x",
    "po/x,POD,x",
    "resourceclaim/c,CLAIM,c",
    "resourceclaims.resource.k8s.io/c,CLAIM,c",
    "Pod/x,POD,x"
  })
  void targetsAreNamedAsKubectlNamesThem(String arg, Target.Kind kind, String name) {
    assertThat(Target.parse(arg)).isEqualTo(new Target(kind, name));
  }

  @ParameterizedTest
  @CsvSource({"x", "pod/", "/x", "node/x", "pod/a/b"})
  void otherTargetsAreRefused(String arg) {
    assertThatThrownBy(() -> Target.parse(arg))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pod/NAME or resourceclaim/NAME");
  }

  @Test
  void anUnreachableServerIsNamed() {
    var refused =
        new KubernetesClientException(
            "Operation: [get] failed", new IOException(new ConnectException("Connection refused")));
    assertThat(Errors.describe(refused, "https://127.0.0.1:1/"))
        .startsWith("cannot reach the API server at https://127.0.0.1:1/: Connection refused");
    var unresolved =
        new KubernetesClientException(
            "failed",
            new IOException(
                new ConnectException(null) {
                  {
                    initCause(new UnresolvedAddressException());
                  }
                }));
    assertThat(Errors.describe(unresolved, "https://kubernetes.default.svc/"))
        .startsWith(
            "cannot reach the API server at https://kubernetes.default.svc/: its host name does "
                + "not resolve");
  }

  @Test
  void aForbiddenReadSaysWhatThePluginReads() {
    var forbidden = new KubernetesClientException("nodes is forbidden", 403, null);
    assertThat(Errors.describe(forbidden, "s"))
        .startsWith("forbidden: ")
        .contains("kubectl dra reads nodes, pods");
  }
}
