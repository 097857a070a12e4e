package io.kdra.helmtests;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.io.StringReader;
import java.util.List;
import java.util.Properties;

/** Finders over the objects {@link Chart#render} returns. */
final class Rendered {

  private Rendered() {}

  static List<PodSpec> podSpecs(List<HasMetadata> objects) {
    return objects.stream()
        .map(
            o -> {
              if (o instanceof Deployment d) {
                return d.getSpec().getTemplate().getSpec();
              }
              if (o instanceof DaemonSet d) {
                return d.getSpec().getTemplate().getSpec();
              }
              return null;
            })
        .filter(p -> p != null)
        .toList();
  }

  static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type, String name) {
    return objects.stream()
        .filter(type::isInstance)
        .map(type::cast)
        .filter(o -> o.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name));
  }

  static Properties properties(List<HasMetadata> objects, String configMap) {
    Properties p = new Properties();
    try {
      p.load(
          new StringReader(
              one(objects, ConfigMap.class, configMap).getData().get("application.properties")));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return p;
  }
}
