package io.kdra.helmtests;

import com.github.javaparser.ast.CompilationUnit;
import com.github.javaparser.ast.body.ClassOrInterfaceDeclaration;
import com.github.javaparser.ast.body.MethodDeclaration;
import com.github.javaparser.ast.expr.AnnotationExpr;
import com.github.javaparser.ast.type.ClassOrInterfaceType;
import com.github.javaparser.ast.type.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * docs/reference/service-properties.md: every property of each service's {@code @ConfigMapping}
 * interface, with its default ({@code @WithDefault}) and its Javadoc, in declaration order. Nested
 * groups are followed into their interfaces (in the same file, or the shared leader-election
 * settings); a map of groups is written with {@code <key>} in place of the map's key.
 */
final class ServicePropertiesPage {

  /** A service, its chart values key and its configuration interface's source. */
  record Service(String name, String values, String source) {}

  static final List<Service> SERVICES =
      List.of(
          new Service(
              "device-driver",
              "deviceDriver",
              "device-driver/src/main/java/io/kdra/devicedriver/config/DriverConfig.java"),
          new Service(
              "slice-publisher",
              "slicePublisher",
              "slice-publisher/src/main/java/io/kdra/slicepublisher/config/PublisherConfig.java"),
          new Service(
              "claim-controller",
              "claimController",
              "claim-controller/src/main/java/io/kdra/claimcontroller/config/"
                  + "ClaimControllerConfig.java"),
          new Service(
              "computeclass-bridge",
              "computeClassBridge",
              "computeclass-bridge/src/main/java/io/kdra/computeclassbridge/config/"
                  + "BridgeConfig.java"));

  /** Configuration groups that several services share, by simple name. */
  private static final String LEADER_ELECTION =
      "kube-support/src/main/java/io/kdra/leadership/LeaderElectionSettings.java";

  /** One property: its full name, type, default (empty: none) and description. */
  record Property(String name, String type, String defaultValue, String description) {}

  private ServicePropertiesPage() {}

  static ReferencePage page() {
    StringBuilder body = new StringBuilder();
    body.append(
        """
        Every property of each service, as its configuration interface declares it. Each is also an
        environment variable (upper case, dots and dashes as underscores:
        `kdra.slice-publisher.max-writes-per-second` is `KDRA_SLICE_PUBLISHER_MAX_WRITES_PER_SECOND`), and in the chart
        the key under `<component>.config` without the service's prefix (for example
        `slicePublisher.config.stale.taint-after`); the chart leaves a property it does not set at
        the default below. `<key>` stands for any map key. What each one means in context: the
        service's page under [docs/user/](../user/).
        """);
    for (Service s : SERVICES) {
      CompilationUnit unit = JavaSources.parse(s.source());
      ClassOrInterfaceDeclaration root = unit.getType(0).asClassOrInterfaceDeclaration();
      String prefix =
          stringMember(root.getAnnotationByName("ConfigMapping").orElseThrow(), "prefix");
      body.append("\n## ")
          .append(s.name())
          .append("\n\nPrefix `")
          .append(prefix)
          .append("`, chart values `")
          .append(s.values())
          .append(".config`; from `")
          .append(s.source())
          .append("`.\n\n| property | type | default | description |\n|---|---|---|---|\n");
      for (Property p : properties(root, prefix, unit)) {
        body.append("| ")
            .append(ReferencePage.code(p.name()))
            .append(" | ")
            .append(p.type())
            .append(" | ")
            .append(p.defaultValue().isEmpty() ? "none" : ReferencePage.code(p.defaultValue()))
            .append(" | ")
            .append(ReferencePage.cell(p.description()))
            .append(" |\n");
      }
    }
    return new ReferencePage(
        "service-properties.md",
        "Service properties",
        "the services' @ConfigMapping interfaces",
        body.toString());
  }

  /** The properties of one group, nested groups flattened in place. */
  static List<Property> properties(
      ClassOrInterfaceDeclaration group, String prefix, CompilationUnit unit) {
    List<Property> out = new ArrayList<>();
    for (MethodDeclaration m : group.getMethods()) {
      if (m.isDefault()
          || m.isStatic()
          || m.getBody().isPresent()
          || !m.getParameters().isEmpty()) {
        continue;
      }
      String name =
          prefix
              + "."
              + m.getAnnotationByName("WithName")
                  .map(a -> stringMember(a, "value"))
                  .orElse(kebab(m.getNameAsString()));
      Type type = unwrap(m.getType(), "Optional");
      Optional<ClassOrInterfaceDeclaration> nested = group(type, unit);
      Optional<ClassOrInterfaceDeclaration> mapped =
          typeArgument(type, "Map", 1).flatMap(v -> group(v, unit));
      if (nested.isPresent()) {
        out.addAll(properties(nested.get(), name, unitOf(nested.get(), unit)));
      } else if (mapped.isPresent()) {
        out.addAll(properties(mapped.get(), name + ".<key>", unitOf(mapped.get(), unit)));
      } else {
        String defaultValue =
            m.getAnnotationByName("WithDefault").map(a -> stringMember(a, "value")).orElse("");
        out.add(new Property(name, typeName(type), defaultValue, JavaSources.javadoc(m)));
      }
    }
    return out;
  }

  /** The configuration group a type names, if it is one: nested in this file, or shared. */
  private static Optional<ClassOrInterfaceDeclaration> group(Type type, CompilationUnit unit) {
    if (!type.isClassOrInterfaceType()) {
      return Optional.empty();
    }
    String simple = type.asClassOrInterfaceType().getNameAsString();
    Optional<ClassOrInterfaceDeclaration> local =
        unit.findFirst(
            ClassOrInterfaceDeclaration.class,
            c -> c.isInterface() && c.getNameAsString().equals(simple));
    if (local.isPresent()) {
      return local;
    }
    if (simple.equals("LeaderElectionSettings")) {
      return Optional.of(
          JavaSources.parse(LEADER_ELECTION).getType(0).asClassOrInterfaceDeclaration());
    }
    return Optional.empty();
  }

  private static CompilationUnit unitOf(
      ClassOrInterfaceDeclaration group, CompilationUnit fallback) {
    return group.findCompilationUnit().orElse(fallback);
  }

  private static Type unwrap(Type type, String wrapper) {
    return typeArgument(type, wrapper, 0).orElse(type);
  }

  private static Optional<Type> typeArgument(Type type, String generic, int index) {
    if (!type.isClassOrInterfaceType()) {
      return Optional.empty();
    }
    ClassOrInterfaceType t = type.asClassOrInterfaceType();
    if (!t.getNameAsString().equals(generic)) {
      return Optional.empty();
    }
    return t.getTypeArguments().filter(a -> a.size() > index).map(a -> a.get(index));
  }

  /** A readable type: {@code Set<String>} is "list of string", {@code Duration} "duration". */
  static String typeName(Type type) {
    for (String collection : List.of("List", "Set")) {
      Optional<Type> element = typeArgument(type, collection, 0);
      if (element.isPresent()) {
        return "list of " + typeName(element.get());
      }
    }
    Optional<Type> value = typeArgument(type, "Map", 1);
    if (value.isPresent()) {
      return "map of " + typeName(value.get());
    }
    String simple =
        type.isClassOrInterfaceType()
            ? type.asClassOrInterfaceType().getNameAsString()
            : type.asString();
    return switch (simple) {
      case "String" -> "string";
      case "Duration" -> "duration";
      case "Path" -> "path";
      case "Integer" -> "int";
      case "Boolean" -> "boolean";
      default -> simple;
    };
  }

  /** SmallRye Config's default naming: {@code maxWritesPerSecond} is max-writes-per-second. */
  static String kebab(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
  }

  private static String stringMember(AnnotationExpr a, String member) {
    if (a.isSingleMemberAnnotationExpr() && member.equals("value")) {
      return JavaSources.constant(a.asSingleMemberAnnotationExpr().getMemberValue()).orElseThrow();
    }
    return a.asNormalAnnotationExpr().getPairs().stream()
        .filter(p -> p.getNameAsString().equals(member))
        .findFirst()
        .flatMap(p -> JavaSources.constant(p.getValue()))
        .orElseThrow();
  }
}
