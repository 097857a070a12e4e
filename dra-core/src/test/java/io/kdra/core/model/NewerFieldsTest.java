package io.kdra.core.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.kdra.core.model.NewerFields.DerivedAttribute;
import io.kdra.core.model.NewerFields.NodeAllocatableResource;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NewerFieldsTest {

  static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void readsCompatibilityGroupsAsTheApiServerWritesThem() throws Exception {
    DeviceCounterConsumption c =
        JSON.readValue(
            "{\"counterSet\":\"s\",\"counters\":{},\"compatibilityGroups\":[\"mig\",\"vgpu\"]}",
            DeviceCounterConsumption.class);
    assertThat(NewerFields.compatibilityGroups(c)).containsExactly("mig", "vgpu");
    assertThat(NewerFields.compatibilityGroups(new DeviceCounterConsumption())).isEmpty();
  }

  @Test
  void readsDerivedAttributesOfRequestsAndSubrequests() throws Exception {
    String json =
        "{\"deviceClassName\":\"c\",\"derivedAttributes\":[{\"name\":\"derived/numa\","
            + "\"expression\":\"device.attributes['a'].numa\"}]}";
    List<DerivedAttribute> expected =
        List.of(new DerivedAttribute("derived/numa", "device.attributes['a'].numa"));
    assertThat(NewerFields.derivedAttributes(JSON.readValue(json, ExactDeviceRequest.class)))
        .isEqualTo(expected);
    assertThat(
            NewerFields.derivedAttributes(
                JSON.readValue(
                    json.replace("{\"device", "{\"name\":\"s\",\"device"), DeviceSubRequest.class)))
        .isEqualTo(expected);
    assertThat(NewerFields.derivedAttributes(new ExactDeviceRequest())).isEmpty();
  }

  @Test
  void readsPartitionTypeAttribute() throws Exception {
    ResourceSliceSpec spec =
        JSON.readValue(
            "{\"driver\":\"d\",\"partitionTypeAttribute\":\"gpu.example.com/profile\"}",
            ResourceSliceSpec.class);
    assertThat(NewerFields.partitionTypeAttribute(spec)).contains("gpu.example.com/profile");
    assertThat(NewerFields.partitionTypeAttribute(new ResourceSliceSpec())).isEmpty();
  }

  @Test
  void readsNodeAllocatableResources() throws Exception {
    Device d =
        JSON.readValue(
            "{\"name\":\"cpu-0\",\"nodeAllocatableResources\":{"
                + "\"cpu\":{\"mapping\":{\"capacityKey\":\"cores\",\"capacityMultiplier\":\"2\"}},"
                + "\"memory\":{\"overhead\":{\"perPod\":\"1Gi\",\"perContainer\":\"64Mi\"}},"
                + "\"hugepages-2Mi\":{\"mapping\":{\"deviceMultiplier\":\"8\"}}}}",
            Device.class);
    Map<String, NodeAllocatableResource> r = NewerFields.nodeAllocatableResources(d);
    assertThat(r).containsOnlyKeys("cpu", "memory", "hugepages-2Mi");
    assertThat(r.get("cpu").mapping().capacityKey()).isEqualTo("cores");
    assertThat(r.get("cpu").mapping().capacityMultiplier()).isEqualTo(Quantity.parse("2"));
    assertThat(r.get("cpu").overhead()).isNull();
    assertThat(r.get("memory").overhead().perPod()).isEqualTo(Quantity.parse("1Gi"));
    assertThat(r.get("memory").overhead().perContainer()).isEqualTo(Quantity.parse("64Mi"));
    assertThat(r.get("hugepages-2Mi").mapping().deviceMultiplier()).isEqualTo(Quantity.parse("8"));
    assertThat(NewerFields.nodeAllocatableResources(new Device())).isEmpty();
  }

  @Test
  void readsSkipNodeOperationsOfSlicesAndResults() throws Exception {
    ResourceSliceSpec spec =
        JSON.readValue(
            "{\"driver\":\"d\",\"skipNodeOperations\":[\"NodePrepareResources\","
                + "\"NodeUnprepareResources\"]}",
            ResourceSliceSpec.class);
    assertThat(NewerFields.skipNodeOperations(spec))
        .containsExactly("NodePrepareResources", "NodeUnprepareResources");
    assertThat(NewerFields.skipNodeOperations(new ResourceSliceSpec())).isEmpty();
    DeviceRequestAllocationResult r =
        JSON.readValue(
            "{\"request\":\"r\",\"skipNodeOperations\":[\"*\"]}",
            DeviceRequestAllocationResult.class);
    assertThat(NewerFields.skipNodeOperations(r)).containsExactly("*");
    assertThat(NewerFields.skipNodeOperations(new DeviceRequestAllocationResult())).isEmpty();
  }

  @Test
  void readsTheFeaturesANodeDeclares() throws Exception {
    Node n =
        JSON.readValue(
            "{\"metadata\":{\"name\":\"n\"},"
                + "\"status\":{\"declaredFeatures\":[\"DRAOptionalNodeOperations\"]}}",
            Node.class);
    assertThat(NewerFields.declaredFeatures(n)).containsExactly("DRAOptionalNodeOperations");
    assertThat(NewerFields.declaredFeatures(new Node())).isEmpty();
  }

  @Test
  void writtenFieldsRoundTripThroughJson() throws Exception {
    DeviceCounterConsumption c = new DeviceCounterConsumption();
    NewerFields.setCompatibilityGroups(c, List.of("mig"));
    ExactDeviceRequest e = new ExactDeviceRequest();
    NewerFields.setDerivedAttributes(e, List.of(new DerivedAttribute("derived/x", "1")));
    ResourceSliceSpec spec = new ResourceSliceSpec();
    NewerFields.setPartitionTypeAttribute(spec, "gpu.example.com/profile");
    NewerFields.setSkipNodeOperations(spec, List.of("*"));
    DeviceRequestAllocationResult result = new DeviceRequestAllocationResult();
    NewerFields.setSkipNodeOperations(result, List.of("NodeUnprepareResources"));
    Node node = new Node();
    NewerFields.setDeclaredFeatures(node, List.of("DRAOptionalNodeOperations"));
    Map<String, NewerFields.NodeAllocatableResource> resources =
        Map.of(
            "cpu",
            new NodeAllocatableResource(
                new NewerFields.Mapping("cores", Quantity.parse("2"), null),
                new NewerFields.Overhead(Quantity.parse("1Gi"), null)));
    Device device = new Device();
    NewerFields.setNodeAllocatableResources(device, resources);
    assertThat(
            NewerFields.compatibilityGroups(
                JSON.readValue(JSON.writeValueAsString(c), DeviceCounterConsumption.class)))
        .containsExactly("mig");
    assertThat(
            NewerFields.derivedAttributes(
                JSON.readValue(JSON.writeValueAsString(e), ExactDeviceRequest.class)))
        .containsExactly(new DerivedAttribute("derived/x", "1"));
    assertThat(
            NewerFields.partitionTypeAttribute(
                JSON.readValue(JSON.writeValueAsString(spec), ResourceSliceSpec.class)))
        .contains("gpu.example.com/profile");
    assertThat(
            NewerFields.skipNodeOperations(
                JSON.readValue(JSON.writeValueAsString(spec), ResourceSliceSpec.class)))
        .containsExactly("*");
    assertThat(
            NewerFields.skipNodeOperations(
                JSON.readValue(
                    JSON.writeValueAsString(result), DeviceRequestAllocationResult.class)))
        .containsExactly("NodeUnprepareResources");
    assertThat(
            NewerFields.declaredFeatures(JSON.readValue(JSON.writeValueAsString(node), Node.class)))
        .containsExactly("DRAOptionalNodeOperations");
    assertThat(
            NewerFields.nodeAllocatableResources(
                JSON.readValue(JSON.writeValueAsString(device), Device.class)))
        .isEqualTo(resources);
  }

  /** Columns: fabric8's class, the 1.37 field NewerFields reads from its additional properties. */
  static Stream<Arguments> fieldsFabric8Lacks() {
    return Stream.of(
        Arguments.of(DeviceCounterConsumption.class, "compatibilityGroups"),
        Arguments.of(ExactDeviceRequest.class, "derivedAttributes"),
        Arguments.of(DeviceSubRequest.class, "derivedAttributes"),
        Arguments.of(ResourceSliceSpec.class, "partitionTypeAttribute"),
        Arguments.of(Device.class, "nodeAllocatableResources"),
        Arguments.of(ResourceSliceSpec.class, "skipNodeOperations"),
        Arguments.of(DeviceRequestAllocationResult.class, "skipNodeOperations"),
        Arguments.of(NodeStatus.class, "declaredFeatures"));
  }

  /**
   * Fails once fabric8's model has the field: then read it from fabric8 and remove its copy in
   * {@link NewerFields}.
   */
  @ParameterizedTest(name = "{0}.{1}")
  @MethodSource("fieldsFabric8Lacks")
  void fabric8DoesNotModelTheFieldYet(Class<?> type, String field) {
    String getter = "get" + Character.toUpperCase(field.charAt(0)) + field.substring(1);
    assertThat(Arrays.stream(type.getMethods()).map(java.lang.reflect.Method::getName))
        .as(
            "fabric8 now models %s.%s: read it from there and remove NewerFields' copy",
            type.getSimpleName(), field)
        .doesNotContain(getter);
  }
}
