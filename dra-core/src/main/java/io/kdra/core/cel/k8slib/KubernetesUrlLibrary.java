package io.kdra.core.cel.k8slib;

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
import io.kdra.core.cel.golang.GoUrl;

/**
 * The Kubernetes {@code url} library ({@code k8s.io/apiserver/pkg/cel/library/urls.go}): {@code
 * url()}, {@code isURL()} and the getters, on {@link GoUrl} (Go's net/url ported): {@code url()}
 * accepts what {@code url.ParseRequestURI} accepts and reads the parts of {@code url.Parse}, as
 * upstream.
 */
public final class KubernetesUrlLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  static final CelType URL = OpaqueType.create("kubernetes.URL");

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration(
            "url", CelOverloadDecl.newGlobalOverload("string_to_url", URL, SimpleType.STRING)),
        CelFunctionDecl.newFunctionDeclaration(
            "isURL",
            CelOverloadDecl.newGlobalOverload("is_url_string", SimpleType.BOOL, SimpleType.STRING)),
        member("getScheme", "url_get_scheme", SimpleType.STRING),
        member("getHost", "url_get_host", SimpleType.STRING),
        member("getHostname", "url_get_hostname", SimpleType.STRING),
        member("getPort", "url_get_port", SimpleType.STRING),
        member("getEscapedPath", "url_get_escaped_path", SimpleType.STRING),
        member(
            "getQuery",
            "url_get_query",
            MapType.create(SimpleType.STRING, ListType.create(SimpleType.STRING))));
  }

  private static CelFunctionDecl member(String name, String id, CelType result) {
    return CelFunctionDecl.newFunctionDeclaration(
        name, CelOverloadDecl.newMemberOverload(id, result, URL));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(
        CelFunctionBinding.from("string_to_url", String.class, KubernetesUrlLibrary::url),
        CelFunctionBinding.from(
            "is_url_string", String.class, s -> GoUrl.parseRequestUri(s).error() == null),
        CelFunctionBinding.from("url_get_scheme", GoUrl.class, GoUrl::scheme),
        CelFunctionBinding.from("url_get_host", GoUrl.class, GoUrl::host),
        CelFunctionBinding.from("url_get_hostname", GoUrl.class, GoUrl::hostname),
        CelFunctionBinding.from("url_get_port", GoUrl.class, GoUrl::port),
        CelFunctionBinding.from("url_get_escaped_path", GoUrl.class, GoUrl::escapedPath),
        CelFunctionBinding.from("url_get_query", GoUrl.class, GoUrl::query));
  }

  private static GoUrl url(String s) throws CelEvaluationException {
    GoUrl.Parsed request = GoUrl.parseRequestUri(s);
    GoUrl.Parsed parsed = request.error() == null ? GoUrl.parse(s) : request;
    if (parsed.error() != null) {
      throw new CelEvaluationException(
          "URL parse error during conversion from string: " + parsed.error());
    }
    return parsed.url();
  }
}
