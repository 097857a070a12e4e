package io.kdra.alloc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads block-style YAML, the kind {@code kubectl get -o yaml} prints and manifests are written in,
 * straight from bytes into the trees Jackson's YAML parser builds, several times faster and with a
 * fraction of its garbage (SnakeYAML makes a token, an event and marks per scalar).
 *
 * <p>It reads a subset: block mappings and sequences (indented or not), plain, single- and
 * double-quoted scalars over one or more lines, literal and folded block scalars, {@code {}} and
 * {@code []}, comments and {@code ---} between documents. On anything else (anchors, tags, flow
 * collections, tabs, CR line ends, explicit keys, an indentation or syntax it does not know) it
 * gives up and returns {@code null}, and the caller reads the input with SnakeYAML: so whatever it
 * accepts is valid YAML read exactly as SnakeYAML reads it, and every error message is still
 * SnakeYAML's. {@code BlockYamlReaderTest} holds it to that on hand-picked and mutated inputs.
 */
final class BlockYamlReader extends YamlBytes {

  private static final int END_OF_INPUT = -1;
  private static final int DOCUMENT_START = -2;

  /** Below SnakeYAML's nesting limit (50), so no input it refuses for depth is accepted here. */
  private static final int MAX_DEPTH = 40;

  /** SnakeYAML looks at most 1024 characters ahead for the ':' of a key. */
  private static final int MAX_KEY_LENGTH = 1000;

  private final YamlScalars scalars;
  private final ByteRangeCache<String> keys = new ByteRangeCache<>();
  private final ByteRangeCache<JsonNode> plainValues = new ByteRangeCache<>();
  private final JsonNodeFactory nodes = JsonNodeFactory.instance;

  private int depth;

  /** Set when a line of a plain scalar ends in a comment, which ends the scalar. */
  private boolean commentEnded;

  private BlockYamlReader(byte[] in, boolean ascii, YamlScalars scalars) {
    super(in, ascii);
    this.scalars = scalars;
  }

  /** The documents of {@code yaml}, or {@code null} when it is not in the subset this reads. */
  static List<JsonNode> read(byte[] yaml, YamlScalars scalars) {
    int text = textKind(yaml);
    if (text == NOT_TEXT) {
      return null;
    }
    try {
      return new BlockYamlReader(yaml, text == ASCII, scalars).documents();
    } catch (OutsideSubset e) {
      return null;
    }
  }

  private List<JsonNode> documents() {
    List<JsonNode> documents = new ArrayList<>();
    boolean started = false; // after a '---' line, before its content
    while (true) {
      int indent = nextLine();
      if (indent == END_OF_INPUT) {
        if (started || documents.isEmpty()) {
          throw OUTSIDE; // an empty document: let SnakeYAML say what it is
        }
        return documents;
      }
      if (indent == DOCUMENT_START) {
        if (started) {
          throw OUTSIDE;
        }
        pos += 3;
        finishLine();
        started = true;
        continue;
      }
      if (!started && !documents.isEmpty()) {
        throw OUTSIDE; // content after the root node
      }
      documents.add(root(indent));
      started = false;
    }
  }

  private JsonNode root(int indent) {
    if (isSequenceEntry(pos)) {
      return sequence(indent);
    }
    if (keyAhead()) {
      return mapping(indent);
    }
    throw OUTSIDE; // a scalar document
  }

  // ---- collections -----------------------------------------------------------------------

  /** A block mapping whose keys start at column {@code indent}; pos is on its first key. */
  private ObjectNode mapping(int indent) {
    enter();
    ObjectNode map = nodes.objectNode();
    while (true) {
      String key = key();
      map.replace(key, valueAfterColon(indent));
      int next = nextLine();
      if (next == indent) {
        if (isSequenceEntry(pos)) {
          throw OUTSIDE;
        }
        continue;
      }
      if (next < indent) {
        depth--;
        return map;
      }
      throw OUTSIDE; // more indented: a continuation or an error
    }
  }

  /** A block sequence whose dashes are at column {@code indent}; pos is on its first dash. */
  private ArrayNode sequence(int indent) {
    enter();
    ArrayNode list = nodes.arrayNode();
    while (true) {
      pos++; // the dash
      list.add(entry(indent));
      int next = nextLine();
      if (next == indent && isSequenceEntry(pos)) {
        continue;
      }
      if (next <= indent) {
        depth--;
        return list; // at the same column, the next key of the mapping holding it
      }
      throw OUTSIDE;
    }
  }

  private void enter() {
    if (++depth > MAX_DEPTH) {
      throw OUTSIDE;
    }
  }

  /** The value after a key's ':' in a mapping at column {@code indent}. */
  private JsonNode valueAfterColon(int indent) {
    skipSpaces();
    if (atLineEnd()) {
      finishLine();
      int next = nextLine();
      if (next > indent) {
        return nested(next);
      }
      if (next == indent && isSequenceEntry(pos)) {
        return sequence(indent); // a sequence need not be indented under its key
      }
      return plain("");
    }
    return inlineValue(indent);
  }

  /** The node after a sequence entry's dash at column {@code indent}. */
  private JsonNode entry(int indent) {
    skipSpaces();
    if (atLineEnd()) {
      finishLine();
      int next = nextLine();
      return next > indent ? nested(next) : plain("");
    }
    if (isSequenceEntry(pos)) {
      throw OUTSIDE; // "- - x"
    }
    if (keyAhead()) {
      return mapping(pos - lineStart);
    }
    return inlineValue(indent);
  }

  /** A collection on the lines below its key or dash, starting at column {@code indent}. */
  private JsonNode nested(int indent) {
    return isSequenceEntry(pos) ? sequence(indent) : mapping(indent);
  }

  /** A scalar (or {} / []) that starts at pos, inside a collection at column {@code indent}. */
  private JsonNode inlineValue(int indent) {
    byte c = in[pos];
    JsonNode value;
    switch (c) {
      case '"' -> value = TextNode.valueOf(QuotedScalar.read(this, true, indent));
      case '\'' -> value = TextNode.valueOf(QuotedScalar.read(this, false, indent));
      case '|', '>' -> {
        return TextNode.valueOf(BlockScalar.read(this, c == '>', indent));
      }
      case '{', '[' -> {
        if (pos + 1 >= end || in[pos + 1] != (c == '{' ? '}' : ']')) {
          throw OUTSIDE; // a flow collection with content
        }
        pos += 2;
        value = c == '{' ? nodes.objectNode() : nodes.arrayNode();
      }
      default -> {
        if (!startsPlain(pos)) {
          throw OUTSIDE;
        }
        return plainScalar(indent);
      }
    }
    finishLine();
    return value;
  }

  // ---- keys --------------------------------------------------------------------------------

  /** Whether a key and its ':' start at pos, on this line. */
  private boolean keyAhead() {
    byte c = in[pos];
    if (c == '"' || c == '\'') {
      int close = closingQuote(pos);
      if (close < 0 || close - pos > MAX_KEY_LENGTH) {
        return false;
      }
      int p = close + 1;
      while (p < end && in[p] == ' ') {
        p++;
      }
      return p < end && in[p] == ':' && isBlankOrEnd(p + 1);
    }
    return plainKeyEnd(pos) >= 0;
  }

  /** Reads a key and its ':'; pos ends after the ':'. */
  private String key() {
    byte c = in[pos];
    String key;
    if (c == '"' || c == '\'') {
      int close = closingQuote(pos);
      if (close < 0 || close - pos > MAX_KEY_LENGTH) {
        throw OUTSIDE;
      }
      key = QuotedScalar.read(this, c == '"', Integer.MAX_VALUE);
      skipSpaces();
      if (pos >= end || in[pos] != ':' || !isBlankOrEnd(pos + 1)) {
        throw OUTSIDE;
      }
    } else {
      int colon = plainKeyEnd(pos);
      if (colon < 0 || !startsPlain(pos)) {
        throw OUTSIDE;
      }
      int last = colon;
      while (in[last - 1] == ' ') {
        last--;
      }
      key = keys.get(in, pos, last);
      if (key == null) {
        key = text(pos, last);
        keys.put(in, pos, last, key);
      }
      pos = colon;
    }
    pos++; // the ':'
    return key;
  }

  /**
   * The position of the ':' that ends a plain key starting at {@code from}, or -1 when this line
   * holds none (before a comment, or within the length SnakeYAML looks ahead).
   */
  private int plainKeyEnd(int from) {
    int limit = Math.min(end, from + MAX_KEY_LENGTH);
    for (int p = from; p < limit; p++) {
      byte c = in[p];
      if (c == '\n' || (c == '#' && p > from && in[p - 1] == ' ')) {
        return -1;
      }
      if (c == ':' && isBlankOrEnd(p + 1)) {
        return p > from ? p : -1;
      }
    }
    return -1;
  }

  /** The closing quote of a one-line quoted scalar opening at {@code open}, or -1. */
  private int closingQuote(int open) {
    byte quote = in[open];
    for (int p = open + 1; p < end; p++) {
      byte c = in[p];
      if (c == '\n') {
        return -1;
      }
      if (quote == '"' && c == '\\') {
        p++;
      } else if (c == quote) {
        if (quote == '\'' && p + 1 < end && in[p + 1] == '\'') {
          p++;
        } else {
          return p;
        }
      }
    }
    return -1;
  }

  // ---- plain scalars -----------------------------------------------------------------------

  /**
   * A plain scalar at pos, in a collection at column {@code indent}: its more indented following
   * lines continue it, folded into one line.
   */
  private JsonNode plainScalar(int indent) {
    int from = pos;
    int to = plainLineEnd();
    int next = nextLineStart(pos);
    StringBuilder folded = null;
    while (!commentEnded && next < end) {
      int blankLines = 0;
      int p = next;
      int spaces;
      while (true) {
        spaces = 0;
        while (p + spaces < end && in[p + spaces] == ' ') {
          spaces++;
        }
        if (p + spaces < end && in[p + spaces] == '\n') {
          blankLines++;
          p += spaces + 1;
          continue;
        }
        break;
      }
      if (p + spaces >= end || spaces <= indent || in[p + spaces] == '#') {
        break; // the scalar ended; what follows belongs to the collections around it
      }
      pos = p + spaces;
      if (!startsPlain(pos) || isSequenceEntry(pos)) {
        throw OUTSIDE;
      }
      int lineFrom = pos;
      int lineTo = plainLineEnd();
      if (folded == null) {
        folded = new StringBuilder().append(text(from, to));
      }
      if (blankLines == 0) {
        folded.append(' ');
      } else {
        folded.append("\n".repeat(blankLines));
      }
      folded.append(text(lineFrom, lineTo));
      next = nextLineStart(pos);
    }
    lineStart = next;
    pos = next;
    commentEnded = false;
    if (folded != null) {
      return plain(folded.toString());
    }
    JsonNode cached = plainValues.get(in, from, to);
    if (cached == null) {
      cached = plain(text(from, to));
      plainValues.put(in, from, to, cached);
    }
    return cached;
  }

  /**
   * Reads one line of a plain scalar from pos: returns where its text ends (trailing spaces
   * dropped) and leaves pos at the end of the line.
   */
  private int plainLineEnd() {
    int p = pos;
    int textEnd = pos;
    while (p < end && in[p] != '\n') {
      byte c = in[p];
      if (c == ':' && isBlankOrEnd(p + 1)) {
        throw OUTSIDE; // "a: b: c", or a key more indented than its mapping
      }
      if (c == '#' && in[p - 1] == ' ') {
        commentEnded = true;
        while (p < end && in[p] != '\n') {
          p++;
        }
        break;
      }
      if (c != ' ') {
        textEnd = p + 1;
      }
      p++;
    }
    pos = p;
    return textEnd;
  }

  private JsonNode plain(String text) {
    try {
      return scalars.plain(text);
    } catch (YamlScalars.Unresolvable e) {
      throw OUTSIDE;
    }
  }

  /** Whether a plain scalar may start at {@code p} (YAML 1.1, as SnakeYAML checks it). */
  private boolean startsPlain(int p) {
    byte c = in[p];
    return switch (c) {
      case '-' -> !isBlankOrEnd(p + 1);
      case '?',
          ':',
          ',',
          '[',
          ']',
          '{',
          '}',
          '#',
          '&',
          '*',
          '!',
          '|',
          '>',
          '\'',
          '"',
          '%',
          '@',
          '`' ->
          false;
      default -> c != ' ' && c != '\n';
    };
  }

  // ---- quoted scalars ----------------------------------------------------------------------

  // ---- lines -------------------------------------------------------------------------------

  /**
   * Moves to the next line with content, skipping blank and comment lines: returns its indentation
   * with pos on its first character, or {@link #END_OF_INPUT}, or {@link #DOCUMENT_START} on a
   * {@code ---} line.
   */
  private int nextLine() {
    while (true) {
      if (lineStart >= end) {
        pos = end;
        return END_OF_INPUT;
      }
      int p = lineStart + spacesAt(lineStart);
      if (p >= end) {
        lineStart = end;
        continue;
      }
      byte c = in[p];
      if (c == '\n') {
        lineStart = p + 1;
        continue;
      }
      if (c == '#') {
        lineStart = nextLineStart(p);
        continue;
      }
      pos = p;
      if (p == lineStart && isDocumentMarker(p)) {
        if (c == '.') {
          throw OUTSIDE;
        }
        return DOCUMENT_START;
      }
      return p - lineStart;
    }
  }
}
