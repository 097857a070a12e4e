package io.kdra.it.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A kube-apiserver started again with one flag changed keeps the form and order of the rest. */
class ApiServerOutageTest {

  @Test
  void aFlagAndItsValueInTwoArgumentsGetsTheNewValue() {
    assertThat(
            ApiServerOutage.withFlag(
                List.of("kube-apiserver", "--etcd-servers", "http://0.0.0.0:2379", "--v=2"),
                "--etcd-servers",
                "http://127.0.0.1:40000"))
        .containsExactly("kube-apiserver", "--etcd-servers", "http://127.0.0.1:40000", "--v=2");
  }

  @Test
  void aFlagWithItsValueInOneArgumentKeepsThatForm() {
    assertThat(
            ApiServerOutage.withFlag(
                List.of("kube-apiserver", "--etcd-servers=http://0.0.0.0:2379"),
                "--etcd-servers",
                "http://127.0.0.1:40000"))
        .containsExactly("kube-apiserver", "--etcd-servers=http://127.0.0.1:40000");
  }

  @Test
  void aMissingFlagIsAppended() {
    assertThat(ApiServerOutage.withFlag(List.of("kube-apiserver", "--v=2"), "--x", "y"))
        .containsExactly("kube-apiserver", "--v=2", "--x=y");
  }

  @Test
  void theCommandItselfIsNeverTakenForAFlag() {
    assertThat(ApiServerOutage.withFlag(List.of("--etcd-servers"), "--etcd-servers", "v"))
        .containsExactly("--etcd-servers", "--etcd-servers=v");
  }
}
