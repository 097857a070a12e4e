package io.kdra.devicedriver.prepare;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PreparedDevice;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.zip.CRC32;

/**
 * The checkpoint file format, version {@value #API_VERSION}: JSON with explicit field names (not
 * Java names, so refactoring cannot change the format), claims sorted by UID, and a CRC32 of the
 * canonical {@code preparedClaims} text that detects a truncated or hand-edited file.
 *
 * <pre>
 * {"apiVersion": "checkpoint.kdra.io/v1", "kind": "DeviceDriverCheckpoint", "checksum": 123,
 *  "preparedClaims": {"&lt;uid&gt;": {"namespace": "...", "name": "...", "devices": [
 *     {"requestNames": ["gpu"], "poolName": "node-a", "deviceName": "gpu-0",
 *      "cdiDeviceIds": ["k8s.gpu.kdra.io/claim=&lt;uid&gt;-gpu-0"]}],
 *   "cdiSpecFile": "...json", "cdiSpec": "...", "traceParent": ""}}}
 * </pre>
 *
 * <p>A later version adds a new {@code apiVersion} and a conversion from this one here; a file of
 * an unknown (newer) version is refused rather than rewritten, so a downgrade cannot lose it.
 */
public final class CheckpointCodec {
  /** The version written. */
  public static final String API_VERSION = "checkpoint.kdra.io/v1";

  static final String KIND = "DeviceDriverCheckpoint";

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper PRETTY =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private CheckpointCodec() {}

  /** The checkpoint cannot be used; {@link #corrupt()} tells damage from an unknown version. */
  public static final class CheckpointException extends Exception {
    private final boolean corrupt;

    CheckpointException(String message, boolean corrupt) {
      super(message);
      this.corrupt = corrupt;
    }

    /** True for damage (bad JSON, checksum); false for a version this driver does not know. */
    public boolean corrupt() {
      return corrupt;
    }
  }

  /** Encodes the prepared claims (any map; the output is sorted by UID). */
  public static String encode(Map<String, PreparedClaim> claims) {
    ObjectNode prepared = claimsNode(new TreeMap<>(claims));
    ObjectNode root = JSON.createObjectNode();
    root.put("apiVersion", API_VERSION);
    root.put("kind", KIND);
    root.put("checksum", checksum(prepared));
    root.set("preparedClaims", prepared);
    try {
      return PRETTY.writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * @throws CheckpointException when the text is not a valid checkpoint of a known version
   */
  public static SortedMap<String, PreparedClaim> decode(String text) throws CheckpointException {
    JsonNode root;
    try {
      root = JSON.readTree(text);
    } catch (JsonProcessingException e) {
      throw new CheckpointException("not JSON: " + e.getOriginalMessage(), true);
    }
    if (root == null || !root.isObject()) {
      throw new CheckpointException("not a JSON object", true);
    }
    String version = root.path("apiVersion").asText("");
    if (!API_VERSION.equals(version)) {
      throw new CheckpointException(
          "apiVersion \"" + version + "\" is not supported (this driver reads " + API_VERSION + ")",
          version.isEmpty());
    }
    JsonNode prepared = root.get("preparedClaims");
    if (prepared == null || !prepared.isObject() || !root.path("checksum").isIntegralNumber()) {
      throw new CheckpointException("preparedClaims or checksum missing", true);
    }
    SortedMap<String, PreparedClaim> claims = new TreeMap<>();
    try {
      for (var it = prepared.fields(); it.hasNext(); ) {
        var e = it.next();
        claims.put(e.getKey(), claim(e.getKey(), e.getValue()));
      }
    } catch (RuntimeException e) {
      throw new CheckpointException("malformed claim entry: " + e.getMessage(), true);
    }
    // Recompute over the canonical form, so whitespace or key order never matter.
    long expected = root.get("checksum").asLong();
    long actual = checksum(claimsNode(claims));
    if (expected != actual) {
      throw new CheckpointException(
          "checksum mismatch (file says " + expected + ", content gives " + actual + ")", true);
    }
    return claims;
  }

  private static ObjectNode claimsNode(SortedMap<String, PreparedClaim> claims) {
    ObjectNode out = JSON.createObjectNode();
    claims.forEach(
        (uid, c) -> {
          ObjectNode n = out.putObject(uid);
          n.put("namespace", c.claim().namespace());
          n.put("name", c.claim().name());
          ArrayNode devices = n.putArray("devices");
          for (PreparedDevice d : c.devices()) {
            ObjectNode dn = devices.addObject();
            d.requestNames().forEach(dn.putArray("requestNames")::add);
            dn.put("poolName", d.poolName());
            dn.put("deviceName", d.deviceName());
            d.cdiDeviceIds().forEach(dn.putArray("cdiDeviceIds")::add);
          }
          n.put("cdiSpecFile", c.cdiSpecFile());
          n.put("cdiSpec", c.cdiSpec());
          n.put("traceParent", c.traceParent());
        });
    return out;
  }

  private static PreparedClaim claim(String uid, JsonNode n) {
    List<PreparedDevice> devices = new ArrayList<>();
    for (JsonNode d : required(n, "devices")) {
      devices.add(
          new PreparedDevice(
              strings(required(d, "requestNames")),
              required(d, "poolName").asText(),
              required(d, "deviceName").asText(),
              strings(required(d, "cdiDeviceIds"))));
    }
    return new PreparedClaim(
        new ClaimRef(required(n, "namespace").asText(), uid, required(n, "name").asText()),
        devices,
        required(n, "cdiSpecFile").asText(),
        required(n, "cdiSpec").asText(),
        n.path("traceParent").asText(""));
  }

  private static JsonNode required(JsonNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      throw new IllegalArgumentException(field + " is missing");
    }
    return v;
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(s -> out.add(s.asText()));
    return out;
  }

  private static long checksum(ObjectNode prepared) {
    CRC32 crc = new CRC32();
    try {
      crc.update(JSON.writeValueAsString(prepared).getBytes(StandardCharsets.UTF_8));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    return crc.getValue();
  }
}
