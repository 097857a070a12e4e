package io.kdra.alloc.cli;

import java.nio.charset.StandardCharsets;

/**
 * YAML input as bytes with a read position, and the line-level steps the block reader and its
 * scalar readers share. Anything outside the block reader's subset throws {@link #OUTSIDE}.
 */
class YamlBytes {

  static final int ASCII = 0;
  static final int UTF8 = 1;
  static final int NOT_TEXT = 2;

  /** Unwinds the reader when the input leaves the subset; carries no stack trace. */
  static final class OutsideSubset extends RuntimeException {
    OutsideSubset() {
      super(null, null, false, false);
    }
  }

  static final OutsideSubset OUTSIDE = new OutsideSubset();

  final byte[] in;
  final int end;
  private final boolean ascii;

  /** Start of the first line not yet read. */
  int lineStart;

  /** Where reading goes on: on the line that starts at {@link #lineStart}, or a later one. */
  int pos;

  YamlBytes(byte[] in, boolean ascii) {
    this.in = in;
    this.end = in.length;
    this.ascii = ascii;
  }

  /** Checks that only spaces or a comment follow pos on its line, and moves to the next. */
  void finishLine() {
    skipSpaces();
    if (pos < end && in[pos] != '\n') {
      if (in[pos] != '#' || in[pos - 1] != ' ') {
        throw OUTSIDE;
      }
    }
    lineStart = nextLineStart(pos);
    pos = lineStart;
  }

  boolean atLineEnd() {
    return pos >= end || in[pos] == '\n' || (in[pos] == '#' && in[pos - 1] == ' ');
  }

  void skipSpaces() {
    while (pos < end && in[pos] == ' ') {
      pos++;
    }
  }

  int spacesAt(int p) {
    int q = p;
    while (q < end && in[q] == ' ') {
      q++;
    }
    return q - p;
  }

  int nextLineStart(int p) {
    while (p < end && in[p] != '\n') {
      p++;
    }
    return Math.min(p + 1, end);
  }

  boolean isSequenceEntry(int p) {
    return p < end && in[p] == '-' && isBlankOrEnd(p + 1);
  }

  boolean isBlankOrEnd(int p) {
    return p >= end || in[p] == ' ' || in[p] == '\n';
  }

  /** {@code ---} or {@code ...} at the start of a line (SnakeYAML ends any scalar at both). */
  boolean isDocumentMarker(int p) {
    if (p + 3 > end) {
      return false;
    }
    byte c = in[p];
    return (c == '-' || c == '.') && in[p + 1] == c && in[p + 2] == c && isBlankOrEnd(p + 3);
  }

  String text(int from, int to) {
    return new String(
        in, from, to - from, ascii ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
  }

  /**
   * Whether input is text the block reader takes: {@link #ASCII}, {@link #UTF8} of characters YAML
   * prints as they are, or {@link #NOT_TEXT} (control characters, tabs, CR, a byte order mark,
   * invalid UTF-8).
   */
  static int textKind(byte[] b) {
    int result = ASCII;
    for (int i = 0; i < b.length; i++) {
      int c = b[i];
      if (c >= 0x20 && c < 0x7f || c == '\n') {
        continue;
      }
      if (c >= 0) {
        return NOT_TEXT; // tabs, CR and other control characters
      }
      int length = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
      if (length == 0 || i + length > b.length) {
        return NOT_TEXT;
      }
      int cp = c & (0x7f >> length);
      for (int k = 1; k < length; k++) {
        int next = b[i + k];
        if ((next & 0xc0) != 0x80) {
          return NOT_TEXT;
        }
        cp = (cp << 6) | (next & 0x3f);
      }
      boolean shortest =
          length == 2 ? cp >= 0x80 : length == 3 ? cp >= 0x800 : cp >= 0x10000 && cp <= 0x10FFFF;
      boolean printable =
          cp >= 0xA0 && cp <= 0xD7FF && cp != 0x2028 && cp != 0x2029
              || cp >= 0xE000 && cp <= 0xFFFD && cp != 0xFEFF
              || cp >= 0x10000;
      if (!shortest || !printable) {
        return NOT_TEXT;
      }
      result = UTF8;
      i += length - 1;
    }
    return result;
  }
}
