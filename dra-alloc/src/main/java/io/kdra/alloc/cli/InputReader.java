package io.kdra.alloc.cli;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import java.util.ArrayList;
import java.util.List;
import org.yaml.snakeyaml.LoaderOptions;

/**
 * Reads YAML or JSON (JSON is YAML): single objects, multi-document streams, and {@code kind: List}
 * (or {@code *List}) wrappers, as {@code kubectl get -o yaml} prints them; JSON input ({@code -o
 * json}) goes through the JSON parser, several times faster. Known kinds are converted to fabric8
 * model objects; other kinds are skipped with a warning. Any parse or type error becomes an {@link
 * InputException} naming the file, the object and the field. Public for {@code kubectl dra
 * what-if}, which reads manifests the same way.
 */
public final class InputReader {

  private static final List<String> RESOURCE_VERSIONS = List.of("resource.k8s.io/v1");

  private final ObjectMapper mapper = yamlMapper();

  /** Plain YAML scalars typed as {@link #mapper} types them, for the block-YAML fast path. */
  private final YamlScalars yamlScalars = new YamlScalars(mapper);

  /**
   * JSON input (what {@code kubectl get -o json} prints) is parsed by Jackson's JSON parser:
   * several times faster than reading it as YAML, which is most of the time of a large dump.
   */
  private final ObjectMapper jsonMapper =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

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
    int[] index = {0};
    try {
      byte[] bytes = file.equals("-") ? stdin.readAllBytes() : Files.readAllBytes(Path.of(file));
      forEachDocument(
          bytes,
          doc -> {
            index[0]++;
            if (doc != null && !doc.isNull() && !doc.isMissingNode()) {
              add(label, "document " + index[0], doc, into);
            }
          });
    } catch (NoSuchFileException e) {
      throw new InputException(label + ": no such file", e);
    } catch (JsonProcessingException e) {
      throw new InputException(
          label + ": not valid YAML or JSON: " + e.getOriginalMessage() + location(e), e);
    } catch (IOException e) {
      throw new InputException(label + ": cannot read: " + e.getMessage(), e);
    }
  }

  /** What is done with each document, in input order. */
  interface DocumentSink {
    void accept(JsonNode doc) throws InputException;
  }

  /**
   * Hands each document of one input to {@code sink}: a stream of JSON values when the input is
   * JSON, else of YAML documents. Input that starts like JSON but is not (a YAML flow mapping such
   * as {@code {kind: Pod}}, or JSON followed by YAML) is read as YAML, document by document, as all
   * input was before the JSON path existed: accepted, or rejected with the same message at the same
   * document. YAML in the block style kubectl prints is read by {@link BlockYamlReader}, into the
   * same trees SnakeYAML's parse gives, and by SnakeYAML when it is outside that reader's subset.
   * Returns whether the input was read as JSON.
   */
  boolean forEachDocument(byte[] bytes, DocumentSink sink) throws IOException, InputException {
    if (startsLikeJson(bytes)) {
      List<JsonNode> docs = new ArrayList<>();
      try (JsonParser parser = jsonMapper.getFactory().createParser(bytes);
          MappingIterator<JsonNode> it = jsonMapper.readValues(parser, JsonNode.class)) {
        while (it.hasNextValue()) {
          docs.add(it.nextValue());
        }
      } catch (JsonProcessingException notJson) {
        docs = null; // read as YAML below
      }
      if (docs != null) {
        for (JsonNode doc : docs) {
          sink.accept(doc);
        }
        return true;
      }
    }
    List<JsonNode> blockDocs = BlockYamlReader.read(bytes, yamlScalars);
    if (blockDocs != null) {
      for (JsonNode doc : blockDocs) {
        sink.accept(doc);
      }
      return false;
    }
    try (JsonParser parser = mapper.getFactory().createParser(bytes);
        MappingIterator<JsonNode> it = mapper.readValues(parser, JsonNode.class)) {
      while (it.hasNextValue()) {
        sink.accept(it.nextValue());
      }
    }
    return false;
  }

  /** The mapper YAML is read and converted with (package-private for the block-YAML tests). */
  static ObjectMapper yamlMapper() {
    return new ObjectMapper(YAMLFactory.builder().loaderOptions(loaderOptions()).build())
        .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
        .registerModule(LazyPropertyDeserializers.module());
  }

  /**
   * SnakeYAML's defaults but for the size limit: its 3 Mi characters refuse a YAML dump of a
   * cluster a tenth the size of the JSON one dra-alloc reads; the input is in memory already.
   */
  private static LoaderOptions loaderOptions() {
    LoaderOptions options = new LoaderOptions();
    options.setCodePointLimit(Integer.MAX_VALUE);
    return options;
  }

  /** Whether the first character after white space (and a UTF-8 byte order mark) is { or [. */
  static boolean startsLikeJson(byte[] bytes) {
    int i =
        bytes.length >= 3
                && (bytes[0] & 0xff) == 0xef
                && (bytes[1] & 0xff) == 0xbb
                && (bytes[2] & 0xff) == 0xbf
            ? 3
            : 0;
    while (i < bytes.length
        && (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\n' || bytes[i] == '\r')) {
      i++;
    }
    return i < bytes.length && (bytes[i] == '{' || bytes[i] == '[');
  }

  private void add(String file, String where, JsonNode doc, Inputs into) throws InputException {
    if (!doc.isObject()) {
      throw new InputException(
          file
              + ": "
              + where
              + ": expected an object, found "
              + doc.getNodeType().toString().toLowerCase(),
          null);
    }
    String kind = doc.path("kind").asText("");
    if (kind.equals("List") || (kind.endsWith("List") && doc.has("items"))) {
      JsonNode items = doc.path("items");
      if (!items.isArray() && !items.isMissingNode() && !items.isNull()) {
        throw new InputException(
            file + ": " + where + " (" + kind + "): field items: " + "expected a list", null);
      }
      int i = 0;
      for (JsonNode item : items) {
        add(file, where + " item " + i++, item, into);
      }
      return;
    }
    String name = doc.path("metadata").path("name").asText("");
    String object =
        kind.isEmpty()
            ? where
            : kind + " " + (name.isEmpty() ? "(unnamed)" : name) + " (" + where + ")";
    switch (kind) {
      case "DeviceClass" -> into.classes.add(convert(file, object, doc, DeviceClass.class));
      case "ResourceSlice" -> into.slices.add(convert(file, object, doc, ResourceSlice.class));
      case "ResourceClaim" -> into.claims.add(convert(file, object, doc, ResourceClaim.class));
      case "ResourceClaimTemplate" ->
          into.templates.add(convert(file, object, doc, ResourceClaimTemplate.class));
      case "Node" -> into.nodes.add(convert(file, object, doc, Node.class));
      case "Pod" -> into.pods.add(convert(file, object, doc, Pod.class));
      case "Deployment", "ReplicaSet", "StatefulSet", "Job" -> {
        List<ObjectNode> pods;
        try {
          pods = WorkloadPods.expand(doc);
        } catch (IllegalArgumentException e) {
          throw new InputException(file + ": " + object + ": " + e.getMessage(), e);
        }
        for (JsonNode pod : pods) {
          into.pods.add(
              convert(
                  file,
                  object + " pod " + pod.path("metadata").path("name").asText(),
                  pod,
                  Pod.class));
        }
      }
      case "" -> throw new InputException(file + ": " + where + ": field kind: missing", null);
      default ->
          warnings.println(program + ": " + file + ": skipping " + object + ": kind not used");
    }
  }

  private <T> T convert(String file, String object, JsonNode doc, Class<T> type)
      throws InputException {
    String apiVersion = doc.path("apiVersion").asText("");
    boolean resourceKind = type != Node.class && type != Pod.class;
    if (resourceKind && !RESOURCE_VERSIONS.contains(apiVersion)) {
      throw new InputException(
          file
              + ": "
              + object
              + ": field apiVersion: \""
              + apiVersion
              + "\" is not supported, use resource.k8s.io/v1",
          null);
    }
    try {
      return mapper.treeToValue(doc, type);
    } catch (JsonMappingException e) {
      throw new InputException(
          file
              + ": "
              + object
              + ": field "
              + path(e)
              + ": "
              + e.getOriginalMessage().split("\n")[0],
          e);
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
    return " (line "
        + e.getLocation().getLineNr()
        + ", column "
        + e.getLocation().getColumnNr()
        + ")";
  }
}
