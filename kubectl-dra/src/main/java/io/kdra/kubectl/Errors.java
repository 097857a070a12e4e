package io.kdra.kubectl;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import javax.net.ssl.SSLException;

/** One line for what went wrong talking to the cluster, naming the server. Pure. */
final class Errors {

  private Errors() {}

  static String describe(Throwable e, String server) {
    String unreachable = unreachable(e);
    if (unreachable != null) {
      return "cannot reach the API server at "
          + server
          + ": "
          + unreachable
          + " (check the kubeconfig and its current context, or pass --kubeconfig/--context)";
    }
    if (e instanceof KubernetesClientException k && k.getCode() > 0) {
      String status =
          k.getStatus() != null && k.getStatus().getMessage() != null
              ? k.getStatus().getMessage()
              : text(k);
      return switch (k.getCode()) {
        case 401 ->
            "the API server at " + server + " refused the credentials (Unauthorized): " + status;
        case 403 ->
            "forbidden: "
                + status
                + " (kubectl dra reads nodes, pods, ResourceClaims, ResourceClaimTemplates, "
                + "ResourceSlices, DeviceClasses and, where served, DeviceTaintRules)";
        default -> "the API server at " + server + " answered " + k.getCode() + ": " + status;
      };
    }
    return text(e);
  }

  /** Why the server could not be talked to at all, or null when it answered. */
  private static String unreachable(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof UnresolvedAddressException || t instanceof UnknownHostException) {
        return "its host name does not resolve";
      }
      if (t instanceof HttpTimeoutException) {
        return "no answer in time";
      }
      if (t instanceof SSLException) {
        return "TLS failed: " + text(t);
      }
      if (t instanceof ConnectException
          && !(t.getCause() instanceof UnresolvedAddressException)
          && (t.getCause() == null || !(t.getCause() instanceof UnknownHostException))) {
        return t.getMessage() == null ? "connection refused" : t.getMessage();
      }
    }
    return null;
  }

  private static String text(Throwable t) {
    String m = t.getMessage();
    return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
  }
}
