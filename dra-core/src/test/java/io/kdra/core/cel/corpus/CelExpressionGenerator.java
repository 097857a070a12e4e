package io.kdra.core.cel.corpus;

import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

/**
 * Random DRA selector expressions from a small typed grammar over every library of the selector
 * environment (standard CEL and macros, strings, lists, sets, optionals, bindings, two-variable
 * comprehensions, regex, string format, Kubernetes named formats, quantity, semver, ip/cidr, url,
 * Kubernetes lists, durations and timestamps), against the attributes of {@link CelDevices}. Most
 * expressions type-check; a few percent mix types on purpose, and some read attributes that a
 * device lacks. Seeded: one seed, one corpus.
 */
public final class CelExpressionGenerator {

  private static final String D = "device.attributes[\"gpu.kdra.io\"]";
  private static final List<String> STRINGS =
      List.of(
          "\"\"",
          "\"a\"",
          "\"H100\"",
          "\"h100\"",
          "\"gpu\"",
          "\"é\"",
          "\"日本\"",
          "\"a,b,c\"",
          "\" x \"",
          "\"\\u00e9t\\u00e9\"",
          "\"🙂\"",
          "\"%s\"",
          "\"10.0.0.1\"",
          "\"1.2.3\"",
          "\"abc\"",
          "\"ABC\"");
  private static final List<String> QUANTITIES =
      List.of(
          "\"1\"",
          "\"1Gi\"",
          "\"80Gi\"",
          "\"500m\"",
          "\"1.5G\"",
          "\"0\"",
          "\"-1\"",
          "\"1Ki\"",
          "\"1e3\"",
          "\"2k\"",
          "\"1GB\"");
  private static final List<String> SEMVERS =
      List.of(
          "\"1.2.3\"",
          "\"1.0.0-alpha\"",
          "\"550.54.15\"",
          "\"0.0.1\"",
          "\"v1.2\"",
          "\"1.2\"",
          "\"1.2.3+build\"",
          "\"01.2.3\"");
  private static final List<String> IPS =
      List.of(
          "\"10.0.0.1\"",
          "\"::1\"",
          "\"2001:db8::1\"",
          "\"127.0.0.1\"",
          "\"fe80::1\"",
          "\"0.0.0.0\"",
          "\"224.0.0.1\"",
          "\"010.0.0.1\"",
          "\"::ffff:1.2.3.4\"",
          "\"1.2.3\"",
          "\"2001:DB8::1\"",
          "\"255.255.255.255\"");
  private static final List<String> CIDRS =
      List.of(
          "\"10.0.0.0/8\"",
          "\"10.1.0.0/16\"",
          "\"::1/128\"",
          "\"2001:db8::/32\"",
          "\"10.0.0.1/8\"",
          "\"10.0.0.0/33\"",
          "\"0.0.0.0/0\"");
  private static final List<String> URLS =
      List.of(
          "\"https://example.com\"",
          "\"https://example.com:8080/a/b?x=1&y=2\"",
          "\"http://[::1]:80/p\"",
          "\"/relative\"",
          "\"example.com\"",
          "\"https://user@host/p%20q\"",
          "\"ftp://h/?a=1&a=2\"",
          "\"https://h/a b?q=a+b\"",
          "\"https://h/?a=%zz&b=1\"",
          "\"http://a b/\"",
          "\"https://h/p#f%zz\"",
          "\"https://h/%2f%41?x=%20;y\"",
          "\"mailto:x@y?s\"",
          "\"https://u:p@h:1/é?é=é\"",
          "\"http://[fe80::1%25en0]:8/\"",
          "\"//h/p\"",
          "\"*\"",
          "\"HTTPS://H/?\"",
          "\"http://h:1:2/\"",
          "\"db://h:1,h:2/\"");
  private static final List<String> REGEXES =
      List.of(
          "\"^H\"",
          "\"[0-9]+\"",
          "\"a|b\"",
          "\"^$\"",
          "\".*\"",
          "\"(x\"",
          "\"[[:alpha:]]+\"",
          "\"\\\\d\"",
          "\"é\"",
          "\"a*\"");
  private static final List<String> FORMATS =
      List.of(
          "dns1123Label",
          "dns1123Subdomain",
          "dns1035Label",
          "qualifiedName",
          "dns1123LabelPrefix",
          "dns1123SubdomainPrefix",
          "dns1035LabelPrefix",
          "labelValue",
          "uri",
          "uuid",
          "byte",
          "date",
          "datetime");
  private static final List<String> FORMAT_INPUTS =
      List.of(
          "\"\"",
          "\"my-name\"",
          "\"My_Name\"",
          "\"a.b\"",
          "\"-a-\"",
          "\"a-\"",
          "\"example.com/x\"",
          "\"/x\"",
          "\"a/b/c\"",
          "\"https://h/p?q\"",
          "\"h/p\"",
          "\"http://[::1]:x/\"",
          "\"http://a b/\"",
          "\"123e4567-e89b-12d3-a456-426614174000\"",
          "\"aGk=\"",
          "\"aGk\"",
          "\"2024-02-29\"",
          "\"2023-02-29\"",
          "\"2024-01-01T10:00:00Z\"",
          "\"2024-01-01T10:00:00\"");
  private static final List<String> DURATIONS =
      List.of(
          "\"1h\"",
          "\"1h30m\"",
          "\"-1s\"",
          "\"1.5s\"",
          "\"0\"",
          "\"0s\"",
          "\"1ms\"",
          "\"1us\"",
          "\"1µs\"",
          "\"1ns\"",
          "\".5m\"",
          "\"+5m\"",
          "\"1h-1m\"",
          "\"2562047h\"",
          "\"2562048h\"",
          "\"315576000000s\"",
          "\"1d\"",
          "\"1x\"",
          "\"\"");
  private static final List<String> TIMESTAMPS =
      List.of(
          "\"2024-01-01T10:00:00Z\"",
          "\"2024-02-29T23:59:59.999999999Z\"",
          "\"1970-01-01T00:00:00Z\"",
          "\"2024-01-01T10:00:00+05:30\"",
          "\"2024-06-30T12:00:00-07:00\"",
          "\"0001-01-01T00:00:00Z\"",
          "\"9999-12-31T23:59:59Z\"",
          "\"2024-01-01T10:00:00.5Z\"",
          "\"2024-01-01t10:00:00z\"",
          "\"2024-01-01\"",
          "\"2024-01-01T10:00:00\"",
          "\"2024-13-01T00:00:00Z\"",
          "\"2023-02-29T00:00:00Z\"");
  private static final List<String> TIME_ZONES =
      List.of(
          "\"UTC\"",
          "\"America/New_York\"",
          "\"Europe/Berlin\"",
          "\"Asia/Kolkata\"",
          "\"Australia/Lord_Howe\"",
          "\"+05:30\"",
          "\"-08:00\"",
          "\"02:00\"",
          "\"+14:00\"",
          "\"Nowhere/City\"",
          "\"\"");
  private static final List<String> INT_ATTRS = List.of("numaNode", "cores", "missingInt");
  private static final List<String> STRING_ATTRS =
      List.of("model", "family", "uuid", "missingString");

  private final Random random;
  private int depth;

  public CelExpressionGenerator(long seed) {
    this.random = new Random(seed);
  }

  private String pick(List<String> options) {
    return options.get(random.nextInt(options.size()));
  }

  @SafeVarargs
  private String oneOf(Supplier<String>... options) {
    depth++;
    try {
      // deep down, prefer the first (leaf) options
      int bound = depth > 3 ? Math.min(2, options.length) : options.length;
      return options[random.nextInt(bound)].get();
    } finally {
      depth--;
    }
  }

  public String next() {
    if (random.nextInt(25) == 0) {
      return typeConfusion();
    }
    return bool();
  }

  private String typeConfusion() {
    return oneOf(
        () -> integer() + " + " + string() + " == 1",
        () -> string() + " < " + integer(),
        () -> "[" + integer() + ", " + string() + "].size() == 2",
        () -> "{" + string() + ": 1, \"k\": \"v\"}.size() == 2",
        () -> D + ".model + 1 == 2",
        () -> "quantity(" + pick(QUANTITIES) + ") < quantity(\"1\")",
        () -> string(),
        () -> integer(),
        () -> "\"%d\".format([" + string() + "]) == \"\"",
        () -> "\"%s %s\".format([" + string() + "]) == \"\"",
        () -> D + ".nosuch.startsWith(\"a\")");
  }

  String bool() {
    return oneOf(
        () -> pick(List.of("true", "false")),
        () -> integer() + " " + pick(List.of("==", "!=", "<", "<=", ">", ">=")) + " " + integer(),
        () -> string() + " " + pick(List.of("==", "!=", "<", ">")) + " " + string(),
        () -> "(" + bool() + " " + pick(List.of("&&", "||")) + " " + bool() + ")",
        () -> "!" + "(" + bool() + ")",
        () -> "(" + bool() + " ? " + bool() + " : " + bool() + ")",
        () ->
            string()
                + "."
                + pick(List.of("startsWith", "endsWith", "contains", "matches"))
                + "("
                + (random.nextBoolean() ? string() : pick(REGEXES))
                + ")",
        () -> "has(" + D + "." + pick(INT_ATTRS) + ")",
        () -> "has(" + D + "." + pick(STRING_ATTRS) + ")",
        () ->
            "\""
                + pick(List.of("gpu.kdra.io", "other.kdra.io", "nosuch.io"))
                + "\" in device."
                + pick(List.of("attributes", "capacity")),
        () -> D + ".migCapable",
        () -> "device.allowMultipleAllocations",
        () -> "device.driver == \"gpu.kdra.io\"",
        () -> integer() + " in " + intList(),
        () -> string() + " in " + stringList(),
        () ->
            intList()
                + "."
                + pick(List.of("all", "exists", "exists_one"))
                + "(x, x "
                + pick(List.of(">", "<", "=="))
                + " "
                + integer()
                + ")",
        () ->
            stringList()
                + ".exists(s, s."
                + pick(List.of("startsWith", "contains"))
                + "("
                + string()
                + "))",
        () -> D + ".all(k, k.size() " + pick(List.of(">", "<")) + " " + integer() + ")",
        () -> "device.attributes.exists(d, d == \"gpu.kdra.io\")",
        () -> intList() + ".all(i, v, i " + pick(List.of("<", "<=", "!=")) + " v)",
        () -> "{\"a\": 1, \"b\": 2}.exists(k, v, v == " + integer() + ")",
        () ->
            "sets."
                + pick(List.of("contains", "intersects", "equivalent"))
                + "("
                + intList()
                + ", "
                + intList()
                + ")",
        () -> intList() + ".isSorted()",
        () -> stringList() + ".isSorted()",
        () -> "isQuantity(" + pick(QUANTITIES) + ")",
        () ->
            "quantity("
                + pick(QUANTITIES)
                + ")."
                + pick(List.of("isGreaterThan", "isLessThan"))
                + "("
                + quantity()
                + ")",
        () -> quantity() + ".isInteger()",
        () -> quantity() + " == " + quantity(),
        () -> "isSemver(" + pick(SEMVERS) + (random.nextBoolean() ? ", true" : "") + ")",
        () -> semver() + "." + pick(List.of("isGreaterThan", "isLessThan")) + "(" + semver() + ")",
        () -> semver() + " == " + semver(),
        () -> "isIP(" + pick(IPS) + ")",
        () -> "ip.isCanonical(" + pick(IPS) + ")",
        () ->
            "ip("
                + pick(IPS)
                + ")."
                + pick(
                    List.of(
                        "isUnspecified",
                        "isLoopback",
                        "isLinkLocalMulticast",
                        "isLinkLocalUnicast",
                        "isGlobalUnicast"))
                + "()",
        () -> "ip(" + pick(IPS) + ") == ip(" + pick(IPS) + ")",
        () -> "isCIDR(" + pick(CIDRS) + ")",
        () -> "cidr(" + pick(CIDRS) + ").containsIP(" + pick(IPS) + ")",
        () -> "cidr(" + pick(CIDRS) + ").containsCIDR(" + pick(CIDRS) + ")",
        () -> "cidr(" + pick(CIDRS) + ").masked() == cidr(" + pick(CIDRS) + ")",
        () -> "isURL(" + pick(URLS) + ")",
        () -> "url(" + pick(URLS) + ").getQuery().size() " + pick(List.of(">", "==")) + " 0",
        () -> "url(" + pick(URLS) + ") == url(" + pick(URLS) + ")",
        () -> optionalInt() + ".hasValue()",
        () -> optionalInt() + " == optional.none()",
        () -> "cel.bind(g, " + D + ", g." + pick(STRING_ATTRS) + " == " + string() + ")",
        () ->
            "cel.bind(x, "
                + integer()
                + ", x * x "
                + pick(List.of(">", "<"))
                + " "
                + integer()
                + ")",
        () -> string() + ".find(" + pick(REGEXES) + ") == " + string(),
        () -> intList() + " == " + intList(),
        () -> D + ".driverVersion.isGreaterThan(semver(" + pick(SEMVERS) + "))",
        () -> "device.capacity[\"gpu.kdra.io\"].memory.compareTo(" + quantity() + ") >= 0",
        () ->
            "double("
                + pick(
                    List.of(
                        "\"1.5\"",
                        "\"inf\"",
                        "\"-Infinity\"",
                        "\"nan\"",
                        "\"1_000\"",
                        "\"0x1p-2\"",
                        "\"0x1.8\"",
                        "\"1e400\"",
                        "\" 1\"",
                        "\"1d\"",
                        "\".5\"",
                        "\"1e\""))
                + ") "
                + pick(List.of("<", "==", ">"))
                + " 1.0",
        () ->
            "double("
                + integer()
                + ") "
                + pick(List.of("<", "==", ">"))
                + " "
                + pick(List.of("1.5", "0.0", "-2.25", "1e10")),
        () -> string() + ".format([" + string() + "]) == " + string(),
        () -> "format.named(\"" + pick(FORMATS) + pick(List.of("", "", "x")) + "\").hasValue()",
        () ->
            format()
                + ".validate("
                + formatInput()
                + ")"
                + pick(List.of(".hasValue()", " == optional.none()")),
        () -> format() + " == " + format(),
        () -> duration() + " " + pick(List.of("==", "!=", "<", "<=", ">", ">=")) + " " + duration(),
        () -> durationList() + "." + pick(List.of("min", "max", "sum")) + "() == " + duration(),
        () -> duration() + " in " + durationList(),
        () -> durationList() + ".isSorted()",
        () ->
            "["
                + timestamp()
                + ", "
                + timestamp()
                + "]."
                + pick(List.of("min()", "max()", "sort()[0]"))
                + " == "
                + timestamp(),
        () ->
            timestamp() + " " + pick(List.of("==", "!=", "<", "<=", ">", ">=")) + " " + timestamp(),
        () -> unsigned() + " " + pick(List.of("==", "!=", "<", "<=", ">", ">=")) + " " + unsigned(),
        () -> integer() + " " + pick(List.of("==", "<", ">")) + " " + unsigned(),
        () -> bytes() + " " + pick(List.of("==", "!=", "<", ">")) + " " + bytes(),
        () ->
            quantity()
                + ".asApproximateFloat() "
                + pick(List.of("<", "==", ">"))
                + " "
                + pick(List.of("1.0", "0.5", "1e9", "8.589934592e10")),
        () ->
            "dyn("
                + integer()
                + ") "
                + pick(List.of("==", "<", ">"))
                + " dyn("
                + pick(List.of("1.0", "1u", "\"1\"", "2.5"))
                + ")",
        () ->
            "[dyn(1), dyn("
                + pick(List.of("1.0", "\"a\"", "true", "[1]"))
                + ")]."
                + pick(List.of("size() == 2", "exists(x, x == 1)", "all(x, x == 1)")),
        () -> "optional.unwrap([" + optionalInt() + ", " + optionalInt() + "]) == " + intList(),
        () ->
            "type("
                + pick(List.of(integer(), string(), "[1]", D + ".model"))
                + ") == "
                + pick(List.of("int", "string", "list", "bool")));
  }

  String integer() {
    return oneOf(
        () -> pick(List.of("0", "1", "-1", "2", "42", "9223372036854775807", "3")),
        () -> D + "." + pick(INT_ATTRS),
        () -> string() + ".size()",
        () ->
            "(" + integer() + " " + pick(List.of("+", "-", "*", "/", "%")) + " " + integer() + ")",
        () -> intList() + ".size()",
        () -> intList() + "." + pick(List.of("sum", "min", "max")) + "()",
        () -> intList() + "." + pick(List.of("indexOf", "lastIndexOf")) + "(" + integer() + ")",
        () -> string() + "." + pick(List.of("indexOf", "lastIndexOf")) + "(" + string() + ")",
        () -> quantity() + ".asInteger()",
        () -> "sign(" + quantity() + ")",
        () -> quantity() + ".compareTo(" + quantity() + ")",
        () -> semver() + "." + pick(List.of("major", "minor", "patch")) + "()",
        () -> optionalInt() + ".orValue(" + integer() + ")",
        () -> "ip(" + pick(IPS) + ").family()",
        () -> "cidr(" + pick(CIDRS) + ").prefixLength()",
        () -> "int(" + pick(List.of("\"12\"", "\"x\"", "1.9", "-1.5", "2u")) + ")",
        () -> bytes() + ".size()",
        () -> "int(" + unsigned() + ")",
        () -> "device.attributes.size()",
        () -> D + ".size()",
        () -> "int(" + pick(List.of(duration(), timestamp())) + ")",
        () ->
            duration()
                + "."
                + pick(List.of("getHours", "getMinutes", "getSeconds", "getMilliseconds"))
                + "()",
        () ->
            timestamp()
                + "."
                + pick(
                    List.of(
                        "getFullYear",
                        "getMonth",
                        "getDate",
                        "getDayOfMonth",
                        "getDayOfWeek",
                        "getDayOfYear",
                        "getHours",
                        "getMinutes",
                        "getSeconds",
                        "getMilliseconds"))
                + "("
                + (random.nextBoolean() ? pick(TIME_ZONES) : "")
                + ")");
  }

  String string() {
    return oneOf(
        () -> pick(STRINGS),
        () -> D + "." + pick(STRING_ATTRS),
        () -> string() + " + " + string(),
        () -> string() + "." + pick(List.of("lowerAscii", "upperAscii", "trim")) + "()",
        () -> string() + ".substring(" + pick(List.of("0", "1", "2")) + ")",
        () -> string() + ".substring(0, " + pick(List.of("0", "1", "5")) + ")",
        () -> string() + ".charAt(" + pick(List.of("0", "1", "3")) + ")",
        () -> string() + ".replace(" + string() + ", " + string() + ")",
        () -> stringList() + ".join(" + pick(List.of("\",\"", "\"\"")) + ")",
        () -> "strings.quote(" + string() + ")",
        () -> "string(" + integer() + ")",
        () ->
            pick(List.of("\"%s-%d\"", "\"%x\"", "\"%.2f\"", "\"%b\"", "\"%o\"", "\"%%\""))
                + ".format(["
                + pick(
                    List.of(
                        string() + ", 1",
                        integer(),
                        "1.5",
                        "\"NaN\"",
                        "true",
                        "[1, 2]",
                        "{\"a\": 1}",
                        "b\"ab\"",
                        "null"))
                + "])",
        () ->
            "\"%s\".format(["
                + pick(
                    List.of(
                        intList(),
                        stringList(),
                        "[1.5, 2.0]",
                        "{\"b\": [1], \"a\": [2]}",
                        "duration(\"1h30m\")",
                        "[duration(\"1s\")]",
                        "2.5",
                        "1e21",
                        "int",
                        "[int]",
                        "-0.0"))
                + "])",
        () -> string() + ".find(" + pick(REGEXES) + ")",
        () -> "string(ip(" + pick(IPS) + "))",
        () -> "string(cidr(" + pick(CIDRS) + ").masked())",
        () ->
            "url("
                + pick(URLS)
                + ")."
                + pick(List.of("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"))
                + "()",
        () -> D + ".?" + pick(STRING_ATTRS) + ".orValue(" + string() + ")",
        () -> stringList() + "[0]",
        () -> "string(" + semver() + ".major())",
        () ->
            "string("
                + pick(
                    List.of(
                        unsigned(), bytes(), "1.5", "-0.0", "1e21", "double(" + integer() + ")"))
                + ")",
        () -> "string(" + pick(List.of(duration(), timestamp())) + ")");
  }

  String duration() {
    return oneOf(
        () -> "duration(" + pick(DURATIONS) + ")",
        () -> "duration(" + integer() + ")",
        () -> duration() + " " + pick(List.of("+", "-")) + " " + duration(),
        () -> timestamp() + " - " + timestamp(),
        () -> "duration(string(" + duration() + "))");
  }

  String durationList() {
    return oneOf(
        () -> pick(List.of("[]", "[duration(\"1s\")]", "[duration(\"2s\"), duration(\"-1s\")]")),
        () -> "[" + duration() + ", " + duration() + "]",
        () -> durationList() + "." + pick(List.of("sort", "distinct", "reverse")) + "()",
        () -> durationList() + ".sortBy(d, -d.getSeconds())",
        () -> durationList() + " + " + durationList());
  }

  String timestamp() {
    return oneOf(
        () -> "timestamp(" + pick(TIMESTAMPS) + ")",
        () -> "timestamp(" + integer() + ")",
        () -> timestamp() + " " + pick(List.of("+", "-")) + " " + duration(),
        () -> duration() + " + " + timestamp(),
        () -> "timestamp(string(" + timestamp() + "))");
  }

  String unsigned() {
    return oneOf(
        () -> pick(List.of("0u", "1u", "2u", "18446744073709551615u", "42u")),
        () ->
            "uint("
                + pick(List.of(integer(), "\"12\"", "\"-1\"", "\"x\"", "1.9", "-1.0", "1e20"))
                + ")",
        () ->
            "("
                + unsigned()
                + " "
                + pick(List.of("+", "-", "*", "/", "%"))
                + " "
                + unsigned()
                + ")",
        () ->
            "["
                + unsigned()
                + ", "
                + unsigned()
                + "]."
                + pick(List.of("sum", "min", "max"))
                + "()");
  }

  String bytes() {
    return oneOf(
        () -> pick(List.of("b\"\"", "b\"ab\"", "b\"\\xff\"", "b\"é\"", "b\"\\000\"")),
        () -> "bytes(" + string() + ")",
        () -> bytes() + " + " + bytes());
  }

  String quantity() {
    return oneOf(
        () -> "quantity(" + pick(QUANTITIES) + ")",
        () -> "device.capacity[\"gpu.kdra.io\"]." + pick(List.of("memory", "cores", "missing")),
        () -> quantity() + "." + pick(List.of("add", "sub")) + "(" + quantity() + ")",
        () -> quantity() + "." + pick(List.of("add", "sub")) + "(" + integer() + ")");
  }

  String semver() {
    return oneOf(
        () -> "semver(" + pick(SEMVERS) + (random.nextInt(3) == 0 ? ", true" : "") + ")",
        () -> D + ".driverVersion");
  }

  String optionalInt() {
    return oneOf(
        () -> pick(List.of("optional.of(1)", "optional.none()", "optional.ofNonZeroValue(0)")),
        () -> D + ".?" + pick(INT_ATTRS),
        () -> intList() + "." + pick(List.of("first", "last")) + "()",
        () -> "{\"a\": 1}[?" + pick(List.of("\"a\"", "\"b\"")) + "]",
        () -> optionalInt() + ".or(" + optionalInt() + ")",
        () -> optionalInt() + ".optMap(x, x + 1)");
  }

  String intList() {
    return oneOf(
        () -> pick(List.of("[]", "[1]", "[1, 2, 3]", "[3, 1, 2]", "[2, 2]", "[-1, 0, 1]")),
        () -> "[" + integer() + ", " + integer() + "]",
        () -> intList() + ".map(x, x * 2)",
        () -> intList() + ".filter(x, x > " + integer() + ")",
        () -> intList() + "." + pick(List.of("sort", "distinct", "reverse")) + "()",
        () -> "lists.range(" + pick(List.of("0", "3", "-1")) + ")",
        () -> intList() + ".slice(0, " + pick(List.of("0", "1", "4")) + ")",
        () -> "[" + intList() + ", " + intList() + "].flatten()",
        () -> intList() + " + " + intList(),
        () -> "[optional.of(1), optional.none()].unwrapOpt()",
        () -> "[1, ?" + optionalInt() + "]",
        () -> intList() + ".sortBy(x, -x)");
  }

  String stringList() {
    return oneOf(
        () -> pick(List.of("[]", "[\"a\"]", "[\"b\", \"a\"]", "[\"é\", \"e\", \"z\"]")),
        () -> string() + ".split(" + pick(List.of("\",\"", "\"\"")) + ")",
        () -> "[" + string() + ", " + string() + "]",
        () -> string() + ".findAll(" + pick(REGEXES) + ")",
        () -> string() + ".findAll(" + pick(REGEXES) + ", " + pick(List.of("0", "1", "-1")) + ")",
        // sorted: a map's keys come in Go's random iteration order upstream, so an order-dependent
        // use of them (isSorted(), [0], join) could not be compared
        () -> "device.attributes[\"gpu.kdra.io\"].map(k, k).sort()",
        () -> stringList() + ".sort()",
        () -> "url(" + pick(URLS) + ").getQuery()[\"a\"]",
        () -> format() + ".validate(" + formatInput() + ").orValue([])");
  }

  /** A named format of the Kubernetes format library. */
  String format() {
    return oneOf(
        () -> "format." + pick(FORMATS) + "()",
        () -> "format.named(\"" + pick(FORMATS) + "\").value()",
        () -> "format.named(" + string() + ").orValue(format.uri())");
  }

  private String formatInput() {
    return random.nextInt(3) == 0 ? string() : pick(FORMAT_INPUTS);
  }
}
