package io.kdra.core.testing;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayList;
import java.util.List;

/**
 * One generated world, as {@code bin/dra-alloc} reads it: classes, slices, claims (already
 * allocated ones carry {@code status.allocation}), templates, nodes and pods, each kind in the
 * order the programs will see it.
 *
 * @param seed the seed it was generated from (printed when a check fails, for replay)
 * @param featureGates the allocator gates both programs decide it with, as {@code --feature-gates}
 *     takes them (the profile's, or for {@link ScenarioGenerator.Profile#NEWER} drawn per seed)
 */
public record GeneratedScenario(
    long seed,
    List<DeviceClass> classes,
    List<ResourceSlice> slices,
    List<ResourceClaim> claims,
    List<ResourceClaimTemplate> templates,
    List<Node> nodes,
    List<Pod> pods,
    String featureGates) {

  private static final ObjectMapper YAML =
      new ObjectMapper(
              YAMLFactory.builder()
                  .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                  .disable(YAMLGenerator.Feature.SPLIT_LINES)
                  .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR)
                  .build())
          .setSerializationInclusion(JsonInclude.Include.NON_EMPTY)
          .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

  /** The arguments that make a program decide with {@link #featureGates()}: none, or one. */
  public List<String> gateArgs() {
    return featureGates.isEmpty() ? List.of() : List.of("--feature-gates=" + featureGates);
  }

  /** The claims without an allocation, in input order: the ones the programs decide about. */
  public List<ResourceClaim> pendingClaims() {
    return claims.stream()
        .filter(c -> c.getStatus() == null || c.getStatus().getAllocation() == null)
        .toList();
  }

  /** The claims allocated before the run. */
  public List<ResourceClaim> allocatedClaims() {
    return claims.stream()
        .filter(c -> c.getStatus() != null && c.getStatus().getAllocation() != null)
        .toList();
  }

  /** All objects in the order they are written. */
  public List<Object> objects() {
    List<Object> all = new ArrayList<>();
    all.addAll(classes);
    all.addAll(nodes);
    all.addAll(slices);
    all.addAll(claims);
    all.addAll(templates);
    all.addAll(pods);
    return all;
  }

  /** A multi-document YAML stream of all objects, headed by a comment naming the seed. */
  public String yaml() {
    StringBuilder out = new StringBuilder();
    out.append("# generated scenario, seed ").append(seed).append('\n');
    try {
      for (Object o : objects()) {
        out.append(YAML.writeValueAsString(o));
      }
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write scenario " + seed, e);
    }
    return out.toString();
  }
}
