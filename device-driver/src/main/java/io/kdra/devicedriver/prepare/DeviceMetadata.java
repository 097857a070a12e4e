package io.kdra.devicedriver.prepare;

import io.kdra.core.model.AttributeValue;
import io.kdra.devicedriver.discovery.NodeDevice;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The device-metadata files of one claim (KEP-5304, {@code metadata.resource.k8s.io/v1beta1}, as
 * upstream's kubeletplugin helper v0.37.2 writes them): one file per request, listing each of its
 * devices of this driver with the attributes the driver publishes for it in its ResourceSlice,
 * bound read-only into the containers at the path upstream's consumers read ({@code
 * k8s.io/dynamic-resource-allocation/devicemetadata}). Pure; the bytes are those of upstream's
 * pretty JSON encoder (Go's {@code json.MarshalIndent}: two-space indent, map keys sorted, {@code
 * <>&} escaped), so a consumer cannot tell the two apart.
 */
final class DeviceMetadata {
  /** Where the containers find the files (upstream's {@code metadata.ContainerDir}). */
  static final String CONTAINER_DIR = "/var/run/kubernetes.io/dra-device-attributes";

  /** Under the driver's plugin data directory on the host (upstream's {@code metadataSubDir}). */
  static final String HOST_SUB_DIR = "dra-device-metadata";

  /** The claim annotation naming the pod's entry for a claim made from a template. */
  static final String POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name";

  /**
   * One file.
   *
   * @param request the base request name it describes (its directory)
   * @param hostPath relative to the plugin data directory
   * @param containerPath absolute, inside the container
   * @param content the JSON stream (one object, v1beta1)
   */
  record File(String request, String hostPath, String containerPath, String content) {}

  /** The claim as the files name it. */
  record Claim(String namespace, String name, String uid, String podClaimName) {}

  /**
   * One allocated device of this driver, under the request (or subrequest) it was allocated for.
   */
  record Allocated(String request, String pool, NodeDevice device) {}

  private DeviceMetadata() {}

  /** The claim's host directory, relative to the plugin data directory. */
  static String claimDir(String namespace, String name) {
    return HOST_SUB_DIR + "/" + namespace + "_" + name;
  }

  /** One file per request, in the order of the requests' first devices. */
  static List<File> files(String driver, Claim claim, List<Allocated> devices) {
    Map<String, List<Allocated>> byRequest = new LinkedHashMap<>();
    devices.forEach(d -> byRequest.computeIfAbsent(d.request(), k -> new ArrayList<>()).add(d));
    List<File> files = new ArrayList<>();
    byRequest.forEach(
        (request, of) -> {
          String base = PreparePlanner.baseRequest(request);
          files.add(
              new File(
                  base,
                  claimDir(claim.namespace(), claim.name()) + "/" + base + "/metadata.json",
                  containerPath(driver, claim, base),
                  content(driver, claim, request, of)));
        });
    return files;
  }

  private static String containerPath(String driver, Claim claim, String request) {
    String file = "/" + request + "/" + driver + "-metadata.json";
    return claim.podClaimName() != null && !claim.podClaimName().isEmpty()
        ? CONTAINER_DIR + "/resourceclaimtemplates/" + claim.podClaimName() + file
        : CONTAINER_DIR + "/resourceclaims/" + claim.name() + file;
  }

  private static String content(String driver, Claim claim, String request, List<Allocated> of) {
    Map<String, Object> meta = new LinkedHashMap<>();
    meta.put("name", claim.name());
    meta.put("namespace", claim.namespace());
    meta.put("uid", claim.uid());
    meta.put("generation", 1L);
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("kind", "DeviceMetadata");
    doc.put("apiVersion", "metadata.resource.k8s.io/v1beta1");
    doc.put("metadata", meta);
    if (claim.podClaimName() != null) {
      doc.put("podClaimName", claim.podClaimName());
    }
    List<Object> devices = new ArrayList<>();
    for (Allocated a : of) {
      Map<String, Object> d = new LinkedHashMap<>();
      d.put("driver", driver);
      d.put("pool", a.pool());
      d.put("name", a.device().name());
      if (!a.device().attributes().isEmpty()) {
        Map<String, Object> attributes = new LinkedHashMap<>();
        // NodeDevice keeps them sorted, as Go sorts map keys
        a.device().attributes().forEach((k, v) -> attributes.put(k, attribute(v)));
        d.put("attributes", attributes);
      }
      devices.add(d);
    }
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("name", request);
    r.put("devices", devices);
    doc.put("requests", List.of(r));
    StringBuilder out = new StringBuilder();
    GoJson.write(out, doc, "");
    return out.append('\n').toString();
  }

  /** The attribute as a ResourceSlice writes it: {@code {"<type>": <value>}}. */
  private static Map<String, Object> attribute(AttributeValue v) {
    if (v instanceof AttributeValue.IntValue i) {
      return Map.of("int", i.value());
    }
    if (v instanceof AttributeValue.BoolValue b) {
      return Map.of("bool", b.value());
    }
    if (v instanceof AttributeValue.StringValue s) {
      return Map.of("string", s.value());
    }
    return Map.of("version", ((AttributeValue.VersionValue) v).value().toString());
  }

  /** Go's {@code json.MarshalIndent(v, "", " ")} for maps (in their order), lists and scalars. */
  static final class GoJson {
    private GoJson() {}

    static void write(StringBuilder out, Object v, String indent) {
      String inner = indent + "  ";
      if (v instanceof Map<?, ?> m) {
        if (m.isEmpty()) {
          out.append("{}");
          return;
        }
        out.append("{\n");
        int i = 0;
        for (Map.Entry<?, ?> e : m.entrySet()) {
          out.append(inner);
          string(out, e.getKey().toString());
          out.append(": ");
          write(out, e.getValue(), inner);
          out.append(++i < m.size() ? ",\n" : "\n");
        }
        out.append(indent).append('}');
      } else if (v instanceof List<?> l) {
        if (l.isEmpty()) {
          out.append("[]");
          return;
        }
        out.append("[\n");
        for (int i = 0; i < l.size(); i++) {
          out.append(inner);
          write(out, l.get(i), inner);
          out.append(i + 1 < l.size() ? ",\n" : "\n");
        }
        out.append(indent).append(']');
      } else if (v instanceof String s) {
        string(out, s);
      } else {
        out.append(v); // Long, Boolean
      }
    }

    private static void string(StringBuilder out, String s) {
      out.append('"');
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '"' -> out.append("\\\"");
          case '\\' -> out.append("\\\\");
          case '\n' -> out.append("\\n");
          case '\r' -> out.append("\\r");
          case '\t' -> out.append("\\t");
          default -> {
            // Go escapes control characters, <, >, & (HTML safety) and U+2028/U+2029
            if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\u2028' || c == '\u2029') {
              out.append(String.format("\\u%04x", (int) c));
            } else {
              out.append(c);
            }
          }
        }
      }
      out.append('"');
    }
  }
}
