package io.kdra.alloc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The pods a workload runs at once, as its controller would create them: a Deployment, ReplicaSet
 * or StatefulSet {@code spec.replicas} pods (default 1), a Job {@code min(spec.parallelism,
 * spec.completions)} (default 1), each named {@code <workload>-<i>} from {@code spec.template}, so
 * that a manifest written for a cluster can be checked as it is. Pure; the input is not modified.
 */
public final class WorkloadPods {
  /** The kinds expanded. */
  public static final Set<String> KINDS = Set.of("Deployment", "ReplicaSet", "StatefulSet", "Job");

  private WorkloadPods() {}

  /**
   * @param doc a document whose {@code kind} is one of {@link #KINDS}
   * @return Pod documents
   * @throws IllegalArgumentException naming the field when the workload has no pod template
   */
  public static List<ObjectNode> expand(JsonNode doc) {
    String kind = doc.path("kind").asText();
    String name = doc.path("metadata").path("name").asText("");
    JsonNode spec = doc.path("spec");
    JsonNode template = spec.path("template");
    if (!template.path("spec").isObject()) {
      throw new IllegalArgumentException("field spec.template.spec: missing");
    }
    long count;
    if (kind.equals("Job")) {
      long parallelism = spec.path("parallelism").asLong(1);
      count =
          spec.has("completions")
              ? Math.min(parallelism, spec.path("completions").asLong(1))
              : parallelism;
    } else {
      count = spec.path("replicas").asLong(1);
    }
    List<ObjectNode> pods = new ArrayList<>();
    for (long i = 0; i < count; i++) {
      ObjectNode pod = JsonNodeFactory.instance.objectNode();
      pod.put("apiVersion", "v1");
      pod.put("kind", "Pod");
      ObjectNode meta =
          template.path("metadata").isObject()
              ? ((ObjectNode) template.path("metadata")).deepCopy()
              : JsonNodeFactory.instance.objectNode();
      meta.put("name", name + "-" + i);
      if (doc.path("metadata").has("namespace")) {
        meta.set("namespace", doc.path("metadata").path("namespace").deepCopy());
      }
      pod.set("metadata", meta);
      pod.set("spec", template.path("spec").deepCopy());
      pods.add(pod);
    }
    return pods;
  }
}
