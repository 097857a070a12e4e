package io.kdra.alloc.cli;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Reads YAML or JSON (JSON is YAML): single objects, multi-document streams, and {@code kind: List}
 * (or {@code *List}) wrappers, as {@code kubectl get -o yaml} prints them. Known kinds are
 * converted to fabric8 model objects; other kinds are skipped with a warning. Any parse or type
 * error becomes an {@link InputException} naming the file, the object and the field. Public for
 * {@code kubectl dra what-if}, which reads manifests the same way.
 */
public final class InputReader {

  private static final List<String> RESOURCE_VERSIONS = List.of("resource.k8s.io/v1");

  private final ObjectMapper mapper = new ObjectMapper(new YAMLFactory())
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
  private final PrintStream warnings;
  private final String program;

  InputReader(PrintStream warnings) {
    this("dra-alloc", warnings);
  }

  /** A reader whose warnings (kinds skipped) go to {@code warnings}, prefixed with the program. */
  public InputReader(String program, PrintStream warnings) {
    this.program = program;
    this.warnings = warnings;
  }

  /** Reads one file ({@code -} = the given stdin) into {@code into}. */
  public void read(String file, InputStream stdin, Inputs into) throws InputException {
    String label = file.equals("-") ? "<stdin>" : file;
    try (InputStream in = file.equals("-") ? stdin : Files.newInputStream(Path.of(file))) {
      JsonParser parser = mapper.getFactory().createParser(in);
      MappingIterator<JsonNode> docs = mapper.readValues(parser, JsonNode.class);
      int index = 0;
      while (docs.hasNextValue()) {
        index++;
        JsonNode doc = docs.nextValue();
        if (doc == null || doc.isNull() || doc.isMissingNode()) {
          continue;
        }
        add(label, "document " + index, doc, into);
      }
    } catch (NoSuchFileException e) {
      throw new InputException(label + ": no such file", e);
    } catch (JsonProcessingException e) {
      throw new InputException(label + ": not valid YAML or JSON: " + e.getOriginalMessage()
          + location(e), e);
    } catch (IOException e) {
      throw new InputException(label + ": cannot read: " + e.getMessage(), e);
    }
  }

  private void add(String file, String where, JsonNode doc, Inputs into) throws InputException {
    if (!doc.isObject()) {
      throw new InputException(file + ": " + where + ": expected an object, found "
          + doc.getNodeType().toString().toLowerCase(), null);
    }
    String kind = doc.path("kind").asText("");
    if (kind.equals("List") || (kind.endsWith("List") && doc.has("items"))) {
      JsonNode items = doc.path("items");
      if (!items.isArray() && !items.isMissingNode() && !items.isNull()) {
        throw new InputException(file + ": " + where + " (" + kind + "): field items: "
            + "expected a list", null);
      }
      int i = 0;
      for (JsonNode item : items) {
        add(file, where + " item " + i++, item, into);
      }
      return;
    }
    String name = doc.path("metadata").path("name").asText("");
    String object = kind.isEmpty() ? where : kind + " " + (name.isEmpty() ? "(unnamed)" : name)
        + " (" + where + ")";
    switch (kind) {
      case "DeviceClass" -> into.classes.add(convert(file, object, doc, DeviceClass.class));
      case "ResourceSlice" -> into.slices.add(convert(file, object, doc, ResourceSlice.class));
      case "ResourceClaim" -> into.claims.add(convert(file, object, doc, ResourceClaim.class));
      case "ResourceClaimTemplate" ->
          into.templates.add(convert(file, object, doc, ResourceClaimTemplate.class));
      case "Node" -> into.nodes.add(convert(file, object, doc, Node.class));
      case "Pod" -> into.pods.add(convert(file, object, doc, Pod.class));
      case "" -> throw new InputException(file + ": " + where + ": field kind: missing", null);
      default -> warnings.println(program + ": " + file + ": skipping " + object
          + ": kind not used");
    }
  }

  private <T> T convert(String file, String object, JsonNode doc, Class<T> type)
      throws InputException {
    String apiVersion = doc.path("apiVersion").asText("");
    boolean resourceKind = type != Node.class && type != Pod.class;
    if (resourceKind && !RESOURCE_VERSIONS.contains(apiVersion)) {
      throw new InputException(file + ": " + object + ": field apiVersion: \"" + apiVersion
          + "\" is not supported, use resource.k8s.io/v1", null);
    }
    try {
      return mapper.treeToValue(doc, type);
    } catch (JsonMappingException e) {
      throw new InputException(file + ": " + object + ": field " + path(e) + ": "
          + e.getOriginalMessage().split("\n")[0], e);
    } catch (JsonProcessingException e) {
      throw new InputException(file + ": " + object + ": " + e.getOriginalMessage(), e);
    } catch (IllegalArgumentException e) {
      throw new InputException(file + ": " + object + ": " + e.getMessage(), e);
    }
  }

  /** A JSON-path-like field name: {@code spec.devices.requests[0].exactly.count}. */
  static String path(JsonMappingException e) {
    StringBuilder b = new StringBuilder();
    for (JsonMappingException.Reference r : e.getPath()) {
      if (r.getIndex() >= 0) {
        b.append('[').append(r.getIndex()).append(']');
      } else if (r.getFieldName() != null) {
        if (b.length() > 0) {
          b.append('.');
        }
        b.append(r.getFieldName());
      }
    }
    return b.length() == 0 ? "(top level)" : b.toString();
  }

  private static String location(JsonProcessingException e) {
    if (e.getLocation() == null || e.getLocation().getLineNr() < 0) {
      return "";
    }
    return " (line " + e.getLocation().getLineNr() + ", column "
        + e.getLocation().getColumnNr() + ")";
  }
}
