package io.kdra.helmtests;

import com.marcnuri.helm.Helm;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class SmokeTest {
  @Test
  void renders() {
    System.out.println(Helm.version().call()); System.out.println(new Helm(Path.of("../helm/kdra")).lint().strict().call().getMessages());
    System.out.println(new Helm(Path.of("../helm/kdra")).template().withName("kdra").withNamespace("kdra-system").withKubeVersion("1.34.0").call());
  }
}
