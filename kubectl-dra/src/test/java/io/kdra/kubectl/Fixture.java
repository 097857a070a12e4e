package io.kdra.kubectl;

import io.kdra.alloc.cli.InputReader;
import io.kdra.alloc.cli.Inputs;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** The test cluster of {@code cluster.yaml}, and manifests, read as the plugin reads them. */
final class Fixture {

  private Fixture() {}

  static ClusterState cluster() {
    Inputs in = read("src/test/resources/cluster.yaml", null);
    return new ClusterState(in.nodes, in.pods, in.claims, in.templates, in.slices, in.classes);
  }

  /** A manifest given as YAML text. */
  static Inputs manifest(String yaml) {
    return read("-", new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)));
  }

  private static Inputs read(String file, InputStream stdin) {
    Inputs in = new Inputs();
    try {
      new InputReader("test", System.err)
          .read(file.equals("-") ? file : Path.of(file).toString(), stdin, in);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return in;
  }
}
