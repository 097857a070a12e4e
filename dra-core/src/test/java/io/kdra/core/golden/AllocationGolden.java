package io.kdra.core.golden;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.kdra.core.model.Quantity;
import io.kdra.core.testing.GeneratedScenario;
import io.kdra.core.testing.ScenarioGenerator.Profile;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The golden allocation scenarios, one file per generator profile ({@code
 * allocations-<profile>.jsonl}): upstream's decision on the scenarios of seeds {@code firstSeed}
 * on. The header names the profile, its feature gates and the seeds; each line a seed, a digest of
 * its input ({@link GeneratedScenario#yaml()}, so that a changed generator is noticed), upstream's
 * exit status, its failure lines, and for every pending claim its allocation (share IDs left out,
 * consumed capacity as plain numbers) or null; a scenario decided with other gates than its
 * profile's (the newer profile draws them) names them in {@code featureGates}.
 */
public final class AllocationGolden {

  static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  private AllocationGolden() {}

  public static String file(Profile profile) {
    return "allocations-" + profile.name().toLowerCase(Locale.ROOT) + ".jsonl";
  }

  /** The header for the oracle that answered. */
  public static ObjectNode header(Profile profile, long firstSeed, int scenarios, JsonNode oracle) {
    ObjectNode h = GoldenFiles.header("allocations", oracle);
    h.put("profile", profile.name().toLowerCase(Locale.ROOT));
    h.put("featureGates", profile.featureGates());
    h.put("firstSeed", firstSeed);
    h.put("scenarios", scenarios);
    return h;
  }

  /**
   * One program's decision as a golden line.
   *
   * @param claims every pending claim by {@code namespace/name}, allocated or not, in output order
   * @param failures the failure lines (stderr)
   */
  public static ObjectNode line(
      Profile profile,
      GeneratedScenario s,
      int exit,
      Map<String, ResourceClaim> claims,
      String failures) {
    ObjectNode line = JSON.createObjectNode();
    line.put("seed", s.seed());
    line.put("input", inputDigest(s));
    if (!s.featureGates().equals(profile.featureGates())) {
      line.put("featureGates", s.featureGates());
    }
    line.put("exit", exit);
    var lines = line.putArray("failures");
    failures.lines().filter(l -> !l.isBlank()).forEach(lines::add);
    ObjectNode out = line.putObject("claims");
    claims.forEach(
        (k, c) ->
            out.set(
                k,
                c.getStatus() == null || c.getStatus().getAllocation() == null
                    ? JSON.nullNode()
                    : comparable(c)));
    return line;
  }

  /** The gates a golden line was decided with: its own, else the profile's. */
  public static String featureGates(Profile profile, JsonNode line) {
    return line.has("featureGates") ? line.get("featureGates").asText() : profile.featureGates();
  }

  /** The start of a SHA-256 over the scenario's YAML. */
  public static String inputDigest(GeneratedScenario s) {
    try {
      byte[] d =
          MessageDigest.getInstance("SHA-256").digest(s.yaml().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A golden line's claims, each with the recorded allocation (or none) in its status. */
  public static Map<String, ResourceClaim> claims(JsonNode line) {
    Map<String, ResourceClaim> out = new LinkedHashMap<>();
    line.path("claims")
        .fields()
        .forEachRemaining(
            e -> {
              ResourceClaim c = new ResourceClaim();
              String[] key = e.getKey().split("/", 2);
              c.setMetadata(new ObjectMetaBuilder().withNamespace(key[0]).withName(key[1]).build());
              if (!e.getValue().isNull()) {
                ResourceClaimStatus status = new ResourceClaimStatus();
                try {
                  status.setAllocation(JSON.treeToValue(e.getValue(), AllocationResult.class));
                } catch (JsonProcessingException x) {
                  throw new IllegalStateException("golden allocation of " + e.getKey(), x);
                }
                c.setStatus(status);
              }
              out.put(e.getKey(), c);
            });
    return out;
  }

  /** The failure lines of a golden line, as one text. */
  public static String failures(JsonNode line) {
    List<String> out = new ArrayList<>();
    line.path("failures").forEach(f -> out.add(f.asText()));
    return String.join("\n", out);
  }

  /**
   * Null when both allocations are the same (devices, node selector, configuration, consumed
   * capacity; share IDs are random UUIDs and left out), else what differs.
   */
  public static String otherAllocation(ResourceClaim ours, ResourceClaim upstream) {
    if (!devices(ours).equals(devices(upstream))) {
      return "ours " + devices(ours) + ", upstream " + devices(upstream);
    }
    JsonNode a = comparable(ours);
    JsonNode b = comparable(upstream);
    return a.equals(b) ? null : "same devices, but ours " + a + ", upstream " + b;
  }

  /** The allocation as JSON without share IDs, quantities as canonical numbers. */
  public static ObjectNode comparable(ResourceClaim c) {
    ObjectNode tree = JSON.valueToTree(c.getStatus().getAllocation());
    for (JsonNode r : tree.path("devices").path("results")) {
      ((ObjectNode) r).remove("shareID");
      JsonNode consumed = r.path("consumedCapacity");
      if (consumed.isObject()) {
        List<String> names = new ArrayList<>();
        consumed.fieldNames().forEachRemaining(names::add);
        for (String n : names) {
          ((ObjectNode) consumed)
              .put(
                  n,
                  Quantity.parse(consumed.get(n).asText())
                      .value()
                      .stripTrailingZeros()
                      .toPlainString());
        }
      }
    }
    return tree;
  }

  /** The chosen devices as request=driver/pool/device, sorted (share IDs are random). */
  public static TreeMap<String, Integer> devices(ResourceClaim c) {
    TreeMap<String, Integer> out = new TreeMap<>();
    for (DeviceRequestAllocationResult r :
        c.getStatus().getAllocation().getDevices().getResults()) {
      out.merge(
          r.getRequest() + "=" + r.getDriver() + "/" + r.getPool() + "/" + r.getDevice(),
          1,
          Integer::sum);
    }
    return out;
  }
}
