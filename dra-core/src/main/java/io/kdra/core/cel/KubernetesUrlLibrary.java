package io.kdra.core.cel;

import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.CelType;
import dev.cel.common.types.ListType;
import dev.cel.common.types.MapType;
import dev.cel.common.types.OpaqueType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Kubernetes {@code url} library ({@code k8s.io/apiserver/pkg/cel/library/urls.go}):
 * {@code url()}, {@code isURL()} and the getters. Hand-written on {@code java.net.URI}, which is
 * close to Go's {@code net/url} for well-formed absolute URLs but stricter for some malformed
 * ones (a known divergence: such strings may be an error here where Go accepts them).
 */
final class KubernetesUrlLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  static final CelType URL = OpaqueType.create("kubernetes.URL");

  /** A parsed URL and the text it came from. */
  record Url(URI uri, String text) {}

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration("url",
            CelOverloadDecl.newGlobalOverload("string_to_url", URL, SimpleType.STRING)),
        CelFunctionDecl.newFunctionDeclaration("isURL",
            CelOverloadDecl.newGlobalOverload("is_url_string", SimpleType.BOOL, SimpleType.STRING)),
        member("getScheme", "url_get_scheme", SimpleType.STRING),
        member("getHost", "url_get_host", SimpleType.STRING),
        member("getHostname", "url_get_hostname", SimpleType.STRING),
        member("getPort", "url_get_port", SimpleType.STRING),
        member("getEscapedPath", "url_get_escaped_path", SimpleType.STRING),
        member("getQuery", "url_get_query",
            MapType.create(SimpleType.STRING, ListType.create(SimpleType.STRING))));
  }

  private static CelFunctionDecl member(String name, String id, CelType result) {
    return CelFunctionDecl.newFunctionDeclaration(name,
        CelOverloadDecl.newMemberOverload(id, result, URL));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(
        CelFunctionBinding.from("string_to_url", String.class, KubernetesUrlLibrary::url),
        CelFunctionBinding.from("is_url_string", String.class, s -> parse(s) != null),
        CelFunctionBinding.from("url_get_scheme", Url.class, u -> nullToEmpty(u.uri().getScheme())),
        CelFunctionBinding.from("url_get_host", Url.class, u -> nullToEmpty(u.uri().getRawAuthority() == null
            ? null : stripUserInfo(u.uri().getRawAuthority()))),
        CelFunctionBinding.from("url_get_hostname", Url.class, KubernetesUrlLibrary::hostname),
        CelFunctionBinding.from("url_get_port", Url.class, KubernetesUrlLibrary::port),
        CelFunctionBinding.from("url_get_escaped_path", Url.class,
            u -> nullToEmpty(u.uri().getRawPath())),
        CelFunctionBinding.from("url_get_query", Url.class, KubernetesUrlLibrary::query));
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }

  private static String stripUserInfo(String authority) {
    int at = authority.lastIndexOf('@');
    return at < 0 ? authority : authority.substring(at + 1);
  }

  private static String hostname(Url u) {
    String host = u.uri().getRawAuthority() == null ? "" : stripUserInfo(u.uri().getRawAuthority());
    if (host.startsWith("[")) {
      int end = host.indexOf(']');
      return end < 0 ? host.substring(1) : host.substring(1, end);
    }
    int colon = host.lastIndexOf(':');
    return colon < 0 ? host : host.substring(0, colon);
  }

  private static String port(Url u) {
    String host = u.uri().getRawAuthority() == null ? "" : stripUserInfo(u.uri().getRawAuthority());
    int colon = host.lastIndexOf(':');
    if (colon < 0 || host.lastIndexOf(']') > colon) {
      return "";
    }
    return host.substring(colon + 1);
  }

  private static Map<String, List<String>> query(Url u) {
    Map<String, List<String>> result = new LinkedHashMap<>();
    String raw = u.uri().getRawQuery();
    if (raw == null || raw.isEmpty()) {
      return result;
    }
    for (String pair : raw.split("&", -1)) {
      if (pair.isEmpty() || pair.contains(";")) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = eq < 0 ? pair : pair.substring(0, eq);
      String value = eq < 0 ? "" : pair.substring(eq + 1);
      try {
        result.computeIfAbsent(URLDecoder.decode(key, StandardCharsets.UTF_8),
            k -> new ArrayList<>()).add(URLDecoder.decode(value, StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        // Go's ParseQuery skips pairs it cannot unescape
      }
    }
    return result;
  }

  private static Url url(String s) throws CelEvaluationException {
    Url u = parse(s);
    if (u == null) {
      throw new CelEvaluationException("URL parse error during conversion from string: parse \""
          + s + "\": invalid URI for request");
    }
    return u;
  }

  /** Go's ParseRequestURI: an absolute URL, or an absolute path; null when not. */
  private static Url parse(String s) {
    if (s.isEmpty() || s.indexOf('#') >= 0 && !s.startsWith("/") && !s.contains("://")) {
      return null;
    }
    try {
      URI uri = new URI(s);
      if (!uri.isAbsolute() && !s.startsWith("/")) {
        return null;
      }
      return new Url(uri, s);
    } catch (URISyntaxException e) {
      return null;
    }
  }
}
