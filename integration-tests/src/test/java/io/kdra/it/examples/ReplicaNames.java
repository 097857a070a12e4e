package io.kdra.it.examples;

import com.fasterxml.jackson.databind.JsonNode;
import io.kdra.alloc.cli.WorkloadPods;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The names under which a workload's pods and their template claims are compared. dra-alloc names a
 * workload's pods {@code <workload>-<i>} in input order ({@link WorkloadPods}) and their template
 * claims {@code <pod>-<entry>}; on a cluster the ReplicaSet or Job controller names the pods with a
 * random suffix and kube-controller-manager's resourceclaim controller names the claims {@code
 * <pod>-<entry>-<random>}. Both become {@code <workload>-*-<entry>}: the replica left out, as the
 * replicas of one workload are alike and are placed in whatever order their controller creates
 * them. Pure.
 */
public final class ReplicaNames {

  private static final String ARROW = " -> ";

  private ReplicaNames() {}

  /** What stands for every pod of {@code workload}: {@code <workload>-*}. */
  public static String anyReplicaOf(String workload) {
    return workload + "-*";
  }

  /** The name dra-alloc gives the claim of a pod's template entry, {@code <pod>-<entry>}. */
  public static String templateClaim(String pod, String entry) {
    return pod + "-" + entry;
  }

  /**
   * dra-alloc's names of the template claims of {@code workload}'s pods, each to the same claim of
   * {@link #anyReplicaOf any replica}; claims the pod template names itself are shared by the
   * replicas and keep their names (not in the map).
   *
   * @param workload a document whose kind is one of {@link WorkloadPods#KINDS}
   */
  public static Map<String, String> ofDraAlloc(JsonNode workload) {
    String name = workload.at("/metadata/name").asText();
    Map<String, String> names = new LinkedHashMap<>();
    for (JsonNode pod : WorkloadPods.expand(workload)) {
      for (JsonNode entry : pod.at("/spec/resourceClaims")) {
        if (entry.hasNonNull("resourceClaimTemplateName")) {
          String e = entry.path("name").asText();
          names.put(
              templateClaim(pod.at("/metadata/name").asText(), e),
              templateClaim(anyReplicaOf(name), e));
        }
      }
    }
    return names;
  }

  /**
   * A {@code -o summary} line ({@code <namespace>/<claim> -> <where>: <devices>}) with its claim
   * renamed as {@code names} says (unchanged when the claim is not in it).
   */
  public static String renamed(String line, Map<String, String> names) {
    int arrow = line.indexOf(ARROW);
    int slash = line.lastIndexOf('/', arrow);
    if (arrow < 0 || slash < 0) {
      throw new IllegalArgumentException("not a summary line: " + line);
    }
    String claim = line.substring(slash + 1, arrow);
    return line.substring(0, slash + 1) + names.getOrDefault(claim, claim) + line.substring(arrow);
  }
}
