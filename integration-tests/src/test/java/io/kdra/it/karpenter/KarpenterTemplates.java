package io.kdra.it.karpenter;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.devicedriver.discovery.DiscoveryException;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.SimulatedBackend;
import io.kdra.devicedriver.publisher.SnapshotMapper;
import io.kdra.slicepublisher.domain.PlannerSettings;
import io.kdra.slicepublisher.domain.SlicePlanner;
import io.kdra.slicepublisher.grpc.SnapshotConverter;
import io.kdra.slicepublisher.template.TemplateSlices;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The templates file of kdra-karpenter-kwok ({@code KDRA_TEMPLATES_FILE}): for each instance type,
 * the ResourceSlices its nodes will get, made from the simulated driver inventory such a node runs
 * with, through the driver's own parser and snapshot ({@link SimulatedBackend}, {@link
 * SnapshotMapper}) and the publisher's own planner ({@link TemplateSlices}).
 */
public final class KarpenterTemplates {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /** One instance type: the simulated inventory its nodes' driver reads, and its labels. */
  public record InstanceTypeInventory(
      String instanceType, String inventoryYaml, Map<String, String> nodeLabels) {}

  private KarpenterTemplates() {}

  /** {@code [{"instanceType": ..., "slices": [ResourceSliceSpec, ...]}, ...]}. */
  public static String json(String driver, List<InstanceTypeInventory> types, Instant now) {
    TemplateSlices templates =
        new TemplateSlices(
            new SnapshotConverter(0, 1024), new SlicePlanner(PlannerSettings.defaults(driver)));
    List<Map<String, Object>> out = new ArrayList<>();
    for (InstanceTypeInventory t : types) {
      Inventory inventory = parse(t);
      List<ResourceSliceSpec> slices =
          templates.forInstanceType(
              SnapshotMapper.snapshot(driver, t.instanceType(), 1, inventory),
              t.instanceType(),
              t.nodeLabels(),
              now);
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("instanceType", t.instanceType());
      entry.put("slices", slices);
      out.add(entry);
    }
    return Serialization.asJson(out);
  }

  private static Inventory parse(InstanceTypeInventory t) {
    try {
      return SimulatedBackend.parse(
          YAML.readTree(t.inventoryYaml()), "inventory of " + t.instanceType());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (DiscoveryException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }
}
