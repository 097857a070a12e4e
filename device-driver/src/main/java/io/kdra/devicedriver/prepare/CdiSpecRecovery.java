package io.kdra.devicedriver.prepare;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PreparedDevice;
import java.util.ArrayList;
import java.util.List;

/**
 * Rebuilds a checkpoint entry from a claim's CDI spec, for when the checkpoint was damaged: the
 * file name holds the claim's UID ({@link CdiNames#specFileName}) and each CDI device's name is
 * {@code <claimUID>-<device>}, which is what an unprepare needs (the spec to delete, the devices to
 * release). The claim's namespace, name and request names are not in the spec; the entry is {@link
 * PreparedClaim#recovered()}, and a prepare plans the claim again. Pure.
 */
final class CdiSpecRecovery {
  private static final ObjectMapper JSON = new ObjectMapper();

  private CdiSpecRecovery() {}

  /**
   * @param fileName a spec file name of this driver (it starts with {@link
   *     CdiNames#specFilePrefix()})
   * @param pool this node's pool, where the devices are
   * @throws IllegalArgumentException naming what in the file is not a spec this driver wrote
   */
  static PreparedClaim claim(CdiNames names, String pool, String fileName, String content) {
    String prefix = names.specFilePrefix();
    if (!fileName.startsWith(prefix) || !fileName.endsWith(".json")) {
      throw new IllegalArgumentException(fileName + " is not named as this driver's specs are");
    }
    String uid = fileName.substring(prefix.length(), fileName.length() - ".json".length());
    if (uid.isEmpty() || !names.specFileName(uid).equals(fileName)) {
      throw new IllegalArgumentException(fileName + " does not name a claim UID");
    }
    JsonNode spec;
    try {
      spec = JSON.readTree(content);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage());
    }
    if (spec == null || !names.kind().equals(spec.path("kind").asText())) {
      throw new IllegalArgumentException("kind is not " + names.kind());
    }
    List<PreparedDevice> devices = new ArrayList<>();
    for (JsonNode d : spec.path("devices")) {
      String cdiName = d.path("name").asText();
      if (cdiName.startsWith(names.metadataDeviceName(uid, ""))) {
        continue; // a request's device-metadata file, not a device
      }
      if (!cdiName.startsWith(uid + "-") || cdiName.length() == uid.length() + 1) {
        throw new IllegalArgumentException(
            "device name \"" + cdiName + "\" is not <claim UID>-<device>");
      }
      String device = cdiName.substring(uid.length() + 1);
      devices.add(
          new PreparedDevice(List.of(), pool, device, List.of(names.deviceId(uid, device))));
    }
    if (devices.isEmpty()) {
      throw new IllegalArgumentException("no devices");
    }
    return new PreparedClaim(new ClaimRef("", uid, ""), devices, fileName, content, "");
  }
}
