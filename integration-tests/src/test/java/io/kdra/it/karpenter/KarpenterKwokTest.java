package io.kdra.it.karpenter;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The KWOK provider's instance-types file in the shape its InstanceTypeOptions read (Go field names
 * for the offering, as its own instance_types.json has them).
 */
class KarpenterKwokTest {

  @Test
  void eachInstanceTypeHasOneOnDemandOfferingAtItsPrice() throws Exception {
    JsonNode types =
        new ObjectMapper()
            .readTree(
                KarpenterKwok.instanceTypesJson(
                    List.of(
                        new KarpenterKwok.InstanceType("a100-x1", 1.0),
                        new KarpenterKwok.InstanceType("l4-x2", 2.0))));

    assertThat(types).hasSize(2);
    JsonNode l4 = types.get(1);
    assertThat(l4.get("name").asText()).isEqualTo("l4-x2");
    assertThat(l4.get("architecture").asText()).isEqualTo("amd64");
    assertThat(l4.get("operatingSystems").get(0).asText()).isEqualTo("linux");
    assertThat(l4.get("resources").get("pods").asText()).isEqualTo("110");
    JsonNode offering = l4.get("offerings").get(0);
    assertThat(offering.get("Price").asDouble()).isEqualTo(2.0);
    assertThat(offering.get("Available").asBoolean()).isTrue();
    JsonNode capacityType = offering.get("Requirements").get(0);
    assertThat(capacityType.get("key").asText()).isEqualTo("karpenter.sh/capacity-type");
    assertThat(capacityType.get("operator").asText()).isEqualTo("In");
    assertThat(capacityType.get("values").get(0).asText()).isEqualTo("on-demand");
  }
}
