package io.kdra.helmtests;

import com.github.javaparser.ParserConfiguration;
import com.github.javaparser.StaticJavaParser;
import com.github.javaparser.ast.CompilationUnit;
import com.github.javaparser.ast.body.BodyDeclaration;
import com.github.javaparser.ast.expr.BinaryExpr;
import com.github.javaparser.ast.expr.Expression;
import com.github.javaparser.ast.nodeTypes.NodeWithJavadoc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Optional;

/** The project's Java sources, read as syntax trees (nothing is compiled or loaded). */
final class JavaSources {

  static {
    StaticJavaParser.getParserConfiguration()
        .setLanguageLevel(ParserConfiguration.LanguageLevel.JAVA_17);
  }

  private JavaSources() {}

  /** A source file by its path from the repository root. */
  static CompilationUnit parse(String path) {
    return parse(ReferencePage.ROOT.resolve(path));
  }

  static CompilationUnit parse(Path file) {
    try {
      return StaticJavaParser.parse(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A declaration's Javadoc text without its block tags, as one line of Markdown. */
  static String javadoc(BodyDeclaration<?> declaration) {
    if (!(declaration instanceof NodeWithJavadoc<?> withJavadoc)) {
      return "";
    }
    return withJavadoc.getJavadoc().map(j -> markdown(j.getDescription().toText())).orElse("");
  }

  /** Javadoc text to Markdown: {@code x} to `x`, {@link X} to X, paragraphs joined. */
  static String markdown(String javadoc) {
    return javadoc
        .replaceAll("\\{@code\\s+([^}]*)}", "`$1`")
        .replaceAll("\\{@link(?:plain)?\\s+#?([^}\\s]*)[^}]*}", "$1")
        .replaceAll("</?p>", " ")
        .replaceAll("\\s+", " ")
        .strip();
  }

  /** A string literal, or a concatenation of them; empty for anything computed. */
  static Optional<String> constant(Expression e) {
    if (e.isStringLiteralExpr()) {
      return Optional.of(e.asStringLiteralExpr().asString());
    }
    if (e.isTextBlockLiteralExpr()) {
      return Optional.of(e.asTextBlockLiteralExpr().asString());
    }
    if (e.isBinaryExpr() && e.asBinaryExpr().getOperator() == BinaryExpr.Operator.PLUS) {
      Optional<String> left = constant(e.asBinaryExpr().getLeft());
      Optional<String> right = constant(e.asBinaryExpr().getRight());
      if (left.isPresent() && right.isPresent()) {
        return Optional.of(left.get() + right.get());
      }
    }
    return Optional.empty();
  }
}
