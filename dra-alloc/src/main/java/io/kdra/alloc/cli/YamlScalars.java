package io.kdra.alloc.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.NodeId;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * Turns a plain YAML scalar into the JSON node Jackson's YAML parser makes of it. The scalar's type
 * comes from SnakeYAML's own {@link Resolver} (YAML 1.1: {@code yes} is true, {@code 010} is 8, an
 * empty value is null), as in Jackson's parser; a value that resolves to anything but a string is
 * handed to Jackson's YAML mapper itself, once per distinct value, so numbers, booleans and nulls
 * come out exactly as they would from a whole-document parse.
 */
final class YamlScalars {

  /** Thrown when a value cannot be taken over from Jackson (its parse fails). */
  static final class Unresolvable extends Exception {
    Unresolvable() {
      super(null, null, false, false);
    }
  }

  private final ObjectMapper yamlMapper;
  private final ResolverView resolver = new ResolverView();
  private final Map<String, JsonNode> nonStrings = new HashMap<>();

  YamlScalars(ObjectMapper yamlMapper) {
    this.yamlMapper = yamlMapper;
  }

  /** The node for a plain (unquoted) scalar with this text. */
  JsonNode plain(String text) throws Unresolvable {
    if (!text.isEmpty() && resolver.unclaimedIsString(text.charAt(0))) {
      return TextNode.valueOf(text);
    }
    JsonNode integer = decimalInteger(text);
    if (integer != null) {
      return integer;
    }
    if (resolver.resolve(NodeId.scalar, text, true).equals(Tag.STR)) {
      return TextNode.valueOf(text);
    }
    JsonNode node = nonStrings.get(text);
    if (node == null) {
      node = parsedByJackson(text);
      nonStrings.put(text, node);
    }
    return node;
  }

  /**
   * A plain decimal integer of up to 18 digits ({@code 0}, {@code 42}, {@code -7}, no sign +, no
   * leading zero, no underscore) as Jackson's YAML parser makes it: an int node where it fits in an
   * int, else a long node. Any other text: null. Dumps hold many distinct integers, each of which
   * would otherwise be a parse of its own ({@code YamlScalarsTest} holds this to Jackson).
   */
  static JsonNode decimalInteger(String text) {
    int length = text.length();
    int i = length > 0 && text.charAt(0) == '-' ? 1 : 0;
    int digits = length - i;
    if (digits == 0 || digits > 18 || (text.charAt(i) == '0' && (length != 1))) {
      return null;
    }
    long value = 0;
    for (; i < length; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return null;
      }
      value = value * 10 + (c - '0');
    }
    if (text.charAt(0) == '-') {
      value = -value;
    }
    return value == (int) value ? IntNode.valueOf((int) value) : LongNode.valueOf(value);
  }

  private JsonNode parsedByJackson(String text) throws Unresolvable {
    if (text.indexOf('\n') >= 0) {
      throw new Unresolvable(); // not expressible as a one-line plain scalar
    }
    try {
      JsonNode value = yamlMapper.readTree("v: " + text).get("v");
      if (value == null || value.isContainerNode()) {
        throw new Unresolvable();
      }
      return value;
    } catch (JsonProcessingException e) {
      throw new Unresolvable();
    }
  }

  /**
   * SnakeYAML's resolver, noting as it is built which first characters its implicit resolvers
   * claim: a non-empty scalar starting with any other is a string without a regular expression run.
   * Resolvers registered for any first character (SnakeYAML files its null resolver there too) are
   * known by their patterns; an unknown one turns the shortcut off.
   */
  private static final class ResolverView extends Resolver {
    /** Patterns tried whatever the first character, with the first characters they can match. */
    private static final Map<String, String> ANY_FIRST_PATTERNS =
        Map.of("^$", "", "^(?:~|null|Null|NULL| )$", "~nN ");

    // Set while Resolver's constructor registers its resolvers, before this class's field
    // initializers would run: so none of these has one.
    private boolean[] claimedAscii;
    private boolean claimsNonAscii;
    private boolean unknownAnyFirst;

    @Override
    public void addImplicitResolver(Tag tag, Pattern regexp, String first, int limit) {
      if (claimedAscii == null) {
        claimedAscii = new boolean[128];
      }
      String firstChars = first;
      if (first == null || first.indexOf('\0') >= 0) { // '\0' files it under "any first"
        String known = ANY_FIRST_PATTERNS.get(regexp.pattern());
        if (known == null) {
          unknownAnyFirst = true;
        }
        firstChars = (first == null ? "" : first) + (known == null ? "" : known);
      }
      for (char c : firstChars.toCharArray()) {
        if (c < 128) {
          claimedAscii[c] = true;
        } else {
          claimsNonAscii = true;
        }
      }
      super.addImplicitResolver(tag, regexp, first, limit);
    }

    boolean unclaimedIsString(char first) {
      if (claimedAscii == null || unknownAnyFirst) {
        return false;
      }
      return first < 128 ? !claimedAscii[first] : !claimsNonAscii;
    }
  }
}
