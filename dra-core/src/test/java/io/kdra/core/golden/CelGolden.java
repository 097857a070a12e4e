package io.kdra.core.golden;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.kdra.core.cel.corpus.CelCorpus;
import io.kdra.core.cel.corpus.CelDevices;
import io.kdra.core.cel.corpus.CelOutcome;
import java.util.ArrayList;
import java.util.List;

/**
 * The golden CEL corpus ({@value #FILE}): upstream's outcome of every case of {@link
 * CelCorpus#golden()}. The header holds the devices as the oracle read them and the generated
 * corpus' seed and size; each line a case ({@code corpus}, {@code device} by name, {@code
 * expression}) and the fields {@code dra-alloc-upstream cel} printed for it ({@code outcome},
 * {@code cost}, {@code costRejected}, {@code actualCost}, {@code error}).
 */
public final class CelGolden {

  public static final String FILE = "cel-corpus.jsonl";

  private CelGolden() {}

  /** The header for the oracle that answered. */
  public static ObjectNode header(JsonNode oracle) {
    ObjectNode h = GoldenFiles.header("cel-corpus", oracle);
    ObjectNode devices = h.putObject("devices");
    CelDevices.all().forEach(d -> devices.set(d.getName(), deviceJson(d)));
    h.putObject("generated")
        .put("seed", CelCorpus.DEFAULT_SEED)
        .put("size", CelCorpus.DEFAULT_SIZE);
    return h;
  }

  /** One line per case, upstream's outcome after the case's fields. */
  public static List<ObjectNode> lines(List<CelCorpus.Case> cases, List<CelOutcome> upstream) {
    List<ObjectNode> out = new ArrayList<>();
    for (int i = 0; i < cases.size(); i++) {
      CelCorpus.Case c = cases.get(i);
      ObjectNode line = GoldenFiles.JSON.createObjectNode();
      line.put("corpus", c.corpus());
      line.put("device", c.deviceName());
      line.put("expression", c.expression());
      line.setAll(upstream.get(i).toJson());
      out.add(line);
    }
    return out;
  }

  /** The cases of a golden file, in its order. */
  public static List<CelCorpus.Case> cases(GoldenFiles.Content golden) {
    List<String> names = CelDevices.all().stream().map(Device::getName).toList();
    return golden.lines().stream()
        .map(
            l ->
                new CelCorpus.Case(
                    l.path("corpus").asText(),
                    l.path("expression").asText(),
                    names.indexOf(l.path("device").asText())))
        .toList();
  }

  /** Upstream's outcomes of a golden file, in its order. */
  public static List<CelOutcome> outcomes(GoldenFiles.Content golden) {
    return golden.lines().stream().map(CelOutcome::fromOracle).toList();
  }

  /** One input line of {@code dra-alloc-upstream cel}. */
  public static String request(int id, CelCorpus.Case c) {
    ObjectNode line = GoldenFiles.JSON.createObjectNode();
    line.put("id", id);
    line.put("expression", c.expression());
    line.set("device", deviceJson(CelDevices.all().get(c.device())));
    return line.toString();
  }

  /** A device as the oracle reads it: driver, attributes, capacity values. */
  public static ObjectNode deviceJson(Device device) {
    ObjectNode n = GoldenFiles.JSON.createObjectNode();
    n.put("driver", CelDevices.DRIVER);
    if (device.getAllowMultipleAllocations() != null) {
      n.put("allowMultipleAllocations", device.getAllowMultipleAllocations());
    }
    n.set("attributes", GoldenFiles.JSON.valueToTree(device.getAttributes()));
    ObjectNode capacity = GoldenFiles.JSON.createObjectNode();
    device
        .getCapacity()
        .forEach((k, v) -> capacity.putObject(k).put("value", v.getValue().toString()));
    n.set("capacity", capacity);
    return n;
  }
}
