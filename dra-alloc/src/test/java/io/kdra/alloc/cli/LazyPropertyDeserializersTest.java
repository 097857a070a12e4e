package io.kdra.alloc.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Deferring the property deserializers changes what is built when, not what is read: every kind
 * {@code dra-alloc} reads, with every property of its model set (a document generated from the
 * model, so a new fabric8 field is covered too), with each object-valued property null, and with a
 * type error deep inside, reads the same through a lazy mapper as through Jackson's own.
 */
class LazyPropertyDeserializersTest {

  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  static Stream<Class<?>> kinds() {
    return Stream.of(
        Pod.class,
        Node.class,
        DeviceClass.class,
        ResourceSlice.class,
        ResourceClaim.class,
        ResourceClaimTemplate.class);
  }

  private static ObjectMapper eager() {
    return new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
  }

  private static ObjectMapper lazy() {
    return eager().registerModule(LazyPropertyDeserializers.module());
  }

  @ParameterizedTest
  @MethodSource("kinds")
  void everyPropertySetReadsAsJacksonReadsIt(Class<?> kind) throws Exception {
    ObjectMapper eager = eager();
    JsonNode doc = new EveryProperty(eager).of(eager.constructType(kind));

    Object expected = eager.treeToValue(doc, kind);
    Object actual = lazy().treeToValue(doc, kind);

    assertThat(actual).isEqualTo(expected);
    // every value the document sets was read: it writes back with as many (984 for a Pod)
    assertThat(leaves(eager.valueToTree(actual))).isEqualTo(leaves(doc)).isGreaterThan(30);
  }

  @ParameterizedTest
  @MethodSource("kinds")
  void nullPropertiesReadAsJacksonReadsThem(Class<?> kind) throws Exception {
    ObjectMapper eager = eager();
    JsonNode doc = new EveryProperty(eager).of(eager.constructType(kind));
    nullEveryContainer(doc);

    assertThat((Object) lazy().treeToValue(doc, kind)).isEqualTo(eager.treeToValue(doc, kind));
  }

  @Test
  void aTypeErrorDeepInsideIsReportedAtTheSameField() throws Exception {
    ObjectMapper eager = eager();
    ObjectNode pod = (ObjectNode) new EveryProperty(eager).of(eager.constructType(Pod.class));
    ((ObjectNode) pod.at("/spec/volumes/0/csi")).put("readOnly", "not-a-boolean");

    JsonMappingException expected =
        catchThrowableOfType(JsonMappingException.class, () -> eager.treeToValue(pod, Pod.class));
    JsonMappingException actual =
        catchThrowableOfType(JsonMappingException.class, () -> lazy().treeToValue(pod, Pod.class));

    assertThat(InputReader.path(actual))
        .isEqualTo(InputReader.path(expected))
        .isEqualTo("spec.volumes[0].csi.readOnly");
    assertThat(actual.getOriginalMessage()).isEqualTo(expected.getOriginalMessage());
  }

  @Test
  void onlyTheTypesADocumentNamesGetADeserializer() throws Exception {
    Set<Class<?>> built = new HashSet<>();
    ObjectMapper mapper =
        lazy()
            .registerModule(
                new SimpleModule()
                    .setDeserializerModifier(
                        new BeanDeserializerModifier() {
                          @Override
                          public JsonDeserializer<?> modifyDeserializer(
                              DeserializationConfig config,
                              BeanDescription bean,
                              JsonDeserializer<?> deserializer) {
                            built.add(bean.getBeanClass());
                            return deserializer;
                          }
                        }));

    mapper.readValue(
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
            + "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
        Pod.class);

    assertThat(built)
        .contains(Pod.class, io.fabric8.kubernetes.api.model.PodSpec.class)
        .doesNotContain(
            io.fabric8.kubernetes.api.model.Volume.class,
            io.fabric8.kubernetes.api.model.Probe.class,
            io.fabric8.kubernetes.api.model.PodStatus.class);
  }

  /** How many scalar values a document holds. */
  private static int leaves(JsonNode node) {
    if (!node.isContainerNode()) {
      return 1;
    }
    int count = 0;
    for (JsonNode child : node) {
      count += leaves(child);
    }
    return count;
  }

  /**
   * Replaces every other object or array value with null, at every depth (the rest are recursed
   * into), so that nulls meet deferred deserializers of many types.
   */
  private static void nullEveryContainer(JsonNode node) {
    boolean nullNext = true;
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> field = it.next();
      if (field.getValue().isContainerNode()) {
        if (nullNext) {
          field.setValue(JSON.nullNode());
        } else {
          nullEveryContainer(field.getValue());
        }
        nullNext = !nullNext;
      }
    }
    for (JsonNode element : node) {
      if (node.isArray()) {
        nullEveryContainer(element);
      }
    }
  }

  /**
   * A JSON document with a value for every property Jackson sees on a model type, recursively (a
   * type already being filled on the path is left out, so recursive types end).
   */
  private static final class EveryProperty {
    private final ObjectMapper mapper;
    private final Deque<Class<?>> path = new ArrayDeque<>();

    EveryProperty(ObjectMapper mapper) {
      this.mapper = mapper;
    }

    JsonNode of(JavaType type) {
      Class<?> raw = type.getRawClass();
      if (raw == String.class) {
        return JSON.textNode("s");
      }
      if (raw == Quantity.class) {
        return JSON.textNode("1Gi");
      }
      if (raw == IntOrString.class) {
        return JSON.numberNode(8080);
      }
      if (raw == Boolean.class || raw == boolean.class) {
        return JSON.booleanNode(true);
      }
      if (Number.class.isAssignableFrom(raw) || (raw.isPrimitive() && raw != char.class)) {
        return JSON.numberNode(2);
      }
      if (raw.isEnum()) {
        return JSON.textNode(raw.getEnumConstants()[0].toString());
      }
      if (type.isCollectionLikeType() || type.isArrayType()) {
        ArrayNode array = JSON.arrayNode();
        JsonNode element = of(type.getContentType());
        if (element != null) {
          array.add(element);
        }
        return array;
      }
      if (type.isMapLikeType()) {
        ObjectNode map = JSON.objectNode();
        JsonNode value = of(type.getContentType());
        if (value != null) {
          map.set("k", value);
        }
        return map;
      }
      if (raw == Object.class || JsonNode.class.isAssignableFrom(raw)) {
        return JSON.objectNode().put("any", 1);
      }
      if (raw.isInterface()
          || java.lang.reflect.Modifier.isAbstract(raw.getModifiers())
          || path.contains(raw)) {
        return null;
      }
      path.push(raw);
      try {
        ObjectNode bean = JSON.objectNode();
        BeanDescription description = mapper.getDeserializationConfig().introspect(type);
        for (BeanPropertyDefinition property : description.findProperties()) {
          if (property.hasSetter() || property.hasField()) {
            JsonNode value = of(property.getPrimaryType());
            if (value != null) {
              bean.set(property.getName(), value);
            }
          }
        }
        return bean;
      } finally {
        path.pop();
      }
    }
  }
}
