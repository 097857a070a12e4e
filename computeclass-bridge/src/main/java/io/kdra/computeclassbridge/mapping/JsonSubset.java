package io.kdra.computeclassbridge.mapping;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Iterator;
import java.util.Map;

/**
 * "Does the live object already say everything we want it to say?" Fields the desired object leaves
 * out (server defaults, fields other tools add) are ignored; everything it sets must be equal, and
 * lists must match element by element. Comparing whole objects instead would make the bridge
 * rewrite an object after every server-side default, and its own write would wake it again: a loop.
 */
public final class JsonSubset {

  private JsonSubset() {}

  /** Whether every field set in {@code desired} has the same value in {@code actual}. */
  public static boolean contains(Object actual, Object desired) {
    return contains(tree(actual), tree(desired));
  }

  private static JsonNode tree(Object o) {
    return Serialization.jsonMapper().valueToTree(o);
  }

  private static boolean contains(JsonNode actual, JsonNode desired) {
    if (desired == null || desired.isNull() || (desired.isContainerNode() && desired.isEmpty())) {
      return actual == null || actual.isNull() || actual.isEmpty();
    }
    if (actual == null) {
      return false;
    }
    if (desired.isObject()) {
      if (!actual.isObject()) {
        return false;
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = desired.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> field = it.next();
        if (!contains(actual.get(field.getKey()), field.getValue())) {
          return false;
        }
      }
      return true;
    }
    if (desired.isArray()) {
      if (!actual.isArray() || actual.size() != desired.size()) {
        return false;
      }
      for (int i = 0; i < desired.size(); i++) {
        if (!contains(actual.get(i), desired.get(i))) {
          return false;
        }
      }
      return true;
    }
    return desired.equals(actual);
  }
}
