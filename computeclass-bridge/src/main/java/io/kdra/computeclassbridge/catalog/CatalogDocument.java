package io.kdra.computeclassbridge.catalog;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.util.List;
import java.util.Map;

/**
 * The catalog file as written (see {@code catalog/accelerators.yaml}); unknown keys are errors so
 * that a typo in an override is reported instead of silently ignored.
 */
record CatalogDocument(
    Boolean replace, Map<String, ProfileDoc> profiles, Map<String, AcceleratorDoc> accelerators) {

  record ProfileDoc(String driver, String kind, String selector, String topologySelector) {}

  record AcceleratorDoc(
      String kind, String description, List<String> names, Map<String, String> selectors) {}

  private static final ObjectMapper YAML =
      new ObjectMapper(new YAMLFactory()).enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

  /**
   * @throws IllegalArgumentException with the parser's message when the text is not a catalog
   */
  static CatalogDocument parse(String yaml) {
    try {
      CatalogDocument doc = YAML.readValue(yaml, CatalogDocument.class);
      return doc == null ? new CatalogDocument(null, null, null) : doc;
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not a valid catalog: " + e.getOriginalMessage(), e);
    }
  }
}
