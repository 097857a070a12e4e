package io.kdra.alloc.cli;

/**
 * A literal (|) or folded (>) YAML block scalar with its chomping (- strip, + keep), read as
 * SnakeYAML reads it. Left to SnakeYAML (the reader gives up): an indentation indicator, leading
 * blank lines, more indented lines in a folded scalar, and input ending without a line break.
 */
final class BlockScalar {

  private BlockScalar() {}

  /**
   * The scalar whose header ({@code |}, {@code >-}, ...) is at the position, in a collection at
   * column {@code indent}; the position ends on the first line after it.
   */
  static String read(YamlBytes y, boolean folded, int indent) {
    y.pos++;
    char chomping = ' ';
    if (y.pos < y.end && (y.in[y.pos] == '-' || y.in[y.pos] == '+')) {
      chomping = (char) y.in[y.pos++];
    }
    if (y.pos < y.end && y.in[y.pos] != ' ' && y.in[y.pos] != '\n') {
      throw YamlBytes.OUTSIDE; // an indentation indicator, or both chompings
    }
    y.finishLine();
    int contentIndent = y.spacesAt(y.lineStart);
    int first = y.lineStart + contentIndent;
    if (first >= y.end || y.in[first] == '\n' || contentIndent <= indent) {
      throw YamlBytes.OUTSIDE; // leading blank lines, or an empty scalar
    }
    StringBuilder text = new StringBuilder();
    int pendingBreaks = 0;
    boolean firstLine = true;
    int line = y.lineStart;
    while (line < y.end) {
      int spaces = y.spacesAt(line);
      int p = line + spaces;
      boolean blank = p >= y.end || y.in[p] == '\n';
      if (blank && spaces <= contentIndent) {
        if (p >= y.end) {
          line = y.end;
          break;
        }
        pendingBreaks++;
        line = p + 1;
        continue;
      }
      if (spaces < contentIndent) {
        break;
      }
      if (folded && spaces > contentIndent) {
        throw YamlBytes.OUTSIDE; // a more indented line keeps its breaks: not read here
      }
      if (!firstLine) {
        if (folded && pendingBreaks == 0) {
          text.append(' ');
        } else {
          if (!folded) {
            text.append('\n');
          }
          text.append("\n".repeat(pendingBreaks));
        }
      }
      int lineEnd = p;
      while (lineEnd < y.end && y.in[lineEnd] != '\n') {
        lineEnd++;
      }
      text.append(y.text(line + contentIndent, lineEnd));
      if (lineEnd >= y.end) {
        throw YamlBytes.OUTSIDE; // the input ends without a line break: rare, not worth its rules
      }
      pendingBreaks = 0;
      firstLine = false;
      line = lineEnd + 1;
    }
    if (chomping != '-') {
      text.append('\n');
    }
    if (chomping == '+') {
      text.append("\n".repeat(pendingBreaks));
    }
    y.lineStart = line;
    y.pos = line;
    return text.toString();
  }
}
