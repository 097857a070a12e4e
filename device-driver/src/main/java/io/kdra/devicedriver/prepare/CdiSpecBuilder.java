package io.kdra.devicedriver.prepare;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Renders one claim's CDI spec as JSON, deterministically (same input, same bytes), so a repeated
 * prepare rewrites an identical file.
 *
 * <p>Only {@code env}, {@code deviceNodes} (with {@code path} alone) and {@code mounts} (MPS pipe
 * directories; in CDI since 0.3.0) are used; the minimum CDI version for that is 0.5.0, because
 * device names start with the claim UID, which may start with a digit (allowed from 0.5.0). Loaders
 * reject specs that declare less than they use, so never raise the features without raising the
 * version.
 */
final class CdiSpecBuilder {
  /** The CDI spec version this builder writes. */
  static final String CDI_VERSION = "0.5.0";

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private final CdiNames names;
  private final List<Map<String, Object>> devices = new ArrayList<>();
  private final List<String> commonEnv = new ArrayList<>();
  private final List<String> commonNodes = new ArrayList<>();

  CdiSpecBuilder(CdiNames names) {
    this.names = names;
  }

  /** Adds a device with its edits. */
  CdiSpecBuilder device(String cdiDeviceName, List<String> env, List<String> deviceNodes) {
    return device(cdiDeviceName, env, deviceNodes, List.of());
  }

  /** Adds a device with its edits, including bind mounts of host directories. */
  CdiSpecBuilder device(
      String cdiDeviceName,
      List<String> env,
      List<String> deviceNodes,
      List<DeviceSetup.Mount> mounts) {
    Map<String, Object> edits = new LinkedHashMap<>();
    if (!env.isEmpty()) {
      edits.put("env", List.copyOf(env));
    }
    if (!deviceNodes.isEmpty()) {
      edits.put("deviceNodes", nodes(deviceNodes));
    }
    if (!mounts.isEmpty()) {
      edits.put(
          "mounts",
          mounts.stream()
              .map(
                  m -> {
                    Map<String, Object> mount = new LinkedHashMap<>();
                    mount.put("hostPath", m.hostPath());
                    mount.put("containerPath", m.containerPath());
                    mount.put("options", List.of("rbind", "rw"));
                    return mount;
                  })
              .toList());
    }
    Map<String, Object> device = new LinkedHashMap<>();
    device.put("name", cdiDeviceName);
    device.put("containerEdits", edits);
    devices.add(device);
    return this;
  }

  /** Adds a device that binds one host file read-only into the container (device metadata). */
  CdiSpecBuilder readOnlyFile(String cdiDeviceName, String hostPath, String containerPath) {
    Map<String, Object> mount = new LinkedHashMap<>();
    mount.put("hostPath", hostPath);
    mount.put("containerPath", containerPath);
    mount.put("options", List.of("ro", "bind"));
    Map<String, Object> device = new LinkedHashMap<>();
    device.put("name", cdiDeviceName);
    device.put("containerEdits", Map.of("mounts", List.of(mount)));
    devices.add(device);
    return this;
  }

  /** Adds edits that apply whenever any device of the spec is used. */
  CdiSpecBuilder common(List<String> env, List<String> deviceNodes) {
    env.stream().filter(e -> !commonEnv.contains(e)).forEach(commonEnv::add);
    deviceNodes.stream().filter(n -> !commonNodes.contains(n)).forEach(commonNodes::add);
    return this;
  }

  /** The spec as pretty JSON; at least one device is required by CDI. */
  String build() {
    if (devices.isEmpty()) {
      throw new IllegalStateException("a CDI spec needs at least one device");
    }
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("cdiVersion", CDI_VERSION);
    spec.put("kind", names.kind());
    spec.put("devices", devices);
    Map<String, Object> edits = new LinkedHashMap<>();
    if (!commonEnv.isEmpty()) {
      edits.put("env", commonEnv);
    }
    if (!commonNodes.isEmpty()) {
      edits.put("deviceNodes", nodes(commonNodes));
    }
    spec.put("containerEdits", edits);
    try {
      return JSON.writeValueAsString(spec) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<Map<String, Object>> nodes(List<String> paths) {
    return paths.stream().map(p -> Map.<String, Object>of("path", p)).toList();
  }
}
