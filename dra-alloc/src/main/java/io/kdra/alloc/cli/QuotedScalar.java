package io.kdra.alloc.cli;

/**
 * A single- or double-quoted YAML scalar, read as SnakeYAML reads it: over several lines folded
 * into one (a line break is a space, a blank line a newline), escapes decoded.
 */
final class QuotedScalar {
  private final YamlBytes y;
  private final boolean doubleQuoted;
  private final StringBuilder text = new StringBuilder();

  private QuotedScalar(YamlBytes y, boolean doubleQuoted) {
    this.y = y;
    this.doubleQuoted = doubleQuoted;
  }

  /**
   * The scalar whose opening quote is at the position; the position ends after the closing quote.
   * Continuation lines must be indented beyond {@code indent}: YAML asks it, SnakeYAML does not
   * check it, so such input is left to SnakeYAML.
   */
  static String read(YamlBytes y, boolean doubleQuoted, int indent) {
    return new QuotedScalar(y, doubleQuoted).read(indent);
  }

  private String read(int indent) {
    byte quote = y.in[y.pos++];
    int runStart = y.pos;
    while (true) {
      if (y.pos >= y.end) {
        throw YamlBytes.OUTSIDE;
      }
      byte c = y.in[y.pos];
      if (c == quote && !(quote == '\'' && y.pos + 1 < y.end && y.in[y.pos + 1] == '\'')) {
        appendRun(runStart, y.pos);
        y.pos++;
        return text.toString();
      }
      if (c == '\'' && quote == '\'') { // '' is one quote
        appendRun(runStart, y.pos + 1);
        y.pos += 2;
        runStart = y.pos;
      } else if (c == '\\' && doubleQuoted) {
        appendRun(runStart, y.pos);
        y.pos++;
        if (y.pos < y.end && y.in[y.pos] == '\n') {
          y.pos++;
          breaks(indent); // an escaped line break: no space
        } else {
          escape();
        }
        runStart = y.pos;
      } else if (c == '\n') {
        int trimmed = y.pos;
        while (trimmed > runStart && y.in[trimmed - 1] == ' ') {
          trimmed--;
        }
        appendRun(runStart, trimmed);
        y.pos++;
        int blankLines = breaks(indent);
        if (blankLines == 0) {
          text.append(' ');
        }
        runStart = y.pos;
      } else {
        y.pos++;
      }
    }
  }

  /** Skips blank lines and the next line's indentation; returns how many lines were blank. */
  private int breaks(int indent) {
    int blankLines = 0;
    while (true) {
      int lineBegin = y.pos;
      while (y.pos < y.end && y.in[y.pos] == ' ') {
        y.pos++;
      }
      if (y.pos < y.end && y.in[y.pos] == '\n') {
        text.append('\n');
        blankLines++;
        y.pos++;
        continue;
      }
      if (y.pos >= y.end || y.pos - lineBegin <= indent) {
        throw YamlBytes.OUTSIDE; // unterminated, or a line SnakeYAML reads but YAML forbids
      }
      return blankLines;
    }
  }

  private void appendRun(int from, int to) {
    if (to > from) {
      text.append(y.text(from, to));
    }
  }

  private void escape() {
    if (y.pos >= y.end) {
      throw YamlBytes.OUTSIDE;
    }
    byte c = y.in[y.pos++];
    switch (c) {
      case '0' -> text.append('\0');
      case 'a' -> text.append('\u0007');
      case 'b' -> text.append('\b');
      case 't' -> text.append('\t');
      case 'n' -> text.append('\n');
      case 'v' -> text.append('\u000B');
      case 'f' -> text.append('\f');
      case 'r' -> text.append('\r');
      case 'e' -> text.append('\u001B');
      case ' ' -> text.append(' ');
      case '"' -> text.append('"');
      case '\\' -> text.append('\\');
      case 'N' -> text.append('\u0085');
      case '_' -> text.append('\u00A0');
      case 'L' -> text.append('\u2028');
      case 'P' -> text.append('\u2029');
      case 'x' -> hex(2);
      case 'u' -> hex(4);
      case 'U' -> hex(8);
      default -> throw YamlBytes.OUTSIDE;
    }
  }

  private void hex(int digits) {
    if (y.pos + digits > y.end) {
      throw YamlBytes.OUTSIDE;
    }
    int value = 0;
    for (int i = 0; i < digits; i++) {
      int d = Character.digit(y.in[y.pos + i], 16);
      if (d < 0) {
        throw YamlBytes.OUTSIDE;
      }
      value = value * 16 + d;
    }
    if (value < 0 || !Character.isValidCodePoint(value)) {
      throw YamlBytes.OUTSIDE;
    }
    text.appendCodePoint(value);
    y.pos += digits;
  }
}
