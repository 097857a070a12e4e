package io.kdra.slicepublisher.grpc;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Who may report for a node, decided from a TokenReview's answer: only a pod of the driver's own
 * ServiceAccount, with a token whose audience is the publisher's, and only for the node that pod is
 * bound to. Pure; {@link KubernetesTokenReviewer} asks the API server.
 *
 * @param serviceAccounts the accepted ServiceAccounts, as {@code namespace:name}; none accepts no
 *     one
 * @param audience the audience the token must be issued for
 */
public record DriverIdentity(Set<String> serviceAccounts, String audience) {

  static final String SA_PREFIX = "system:serviceaccount:";
  static final String NODE_NAME = "authentication.kubernetes.io/node-name";
  static final String POD_NAME = "authentication.kubernetes.io/pod-name";

  public DriverIdentity {
    serviceAccounts = Set.copyOf(serviceAccounts);
  }

  /**
   * A TokenReview's answer, as far as it matters here.
   *
   * @param audiences the audiences the API server found the token valid for
   */
  public record Review(
      boolean authenticated,
      String error,
      String username,
      Map<String, List<String>> extra,
      List<String> audiences) {

    public Review {
      extra = extra == null ? Map.of() : Map.copyOf(extra);
      audiences = audiences == null ? List.of() : List.copyOf(audiences);
    }

    /** The caller, for logs: its user name and, when the token names them, pod and node. */
    public String who() {
      String pod = first(extra.get(POD_NAME));
      String node = first(extra.get(NODE_NAME));
      return (username == null || username.isEmpty() ? "an unknown caller" : username)
          + (pod == null ? "" : " (pod " + pod + (node == null ? "" : " on node " + node) + ")");
    }
  }

  /** What the review proves. */
  public sealed interface Verdict {
    /** A driver pod: its node, or, on clusters before 1.30, its pod to look the node up by. */
    record Driver(String node, String namespace, String pod) implements Verdict {}

    /** Not a driver; the reason names who and why, for the driver's and the publisher's log. */
    record Refused(String reason) implements Verdict {}
  }

  /** Judges one review. */
  public Verdict judge(Review review) {
    if (!review.authenticated()) {
      String why = review.error() == null || review.error().isEmpty() ? "" : ": " + review.error();
      return new Verdict.Refused("token not authenticated for audience \"" + audience + "\"" + why);
    }
    if (!review.audiences().contains(audience)) {
      // an empty list means the API server's own audiences (TokenReviewStatus.audiences)
      return new Verdict.Refused(
          "token of "
              + review.who()
              + " is for "
              + (review.audiences().isEmpty()
                  ? "the API server's audiences"
                  : review.audiences().toString())
              + ", not for \""
              + audience
              + "\"");
    }
    String username = review.username() == null ? "" : review.username();
    if (!username.startsWith(SA_PREFIX)) {
      return new Verdict.Refused("token of " + review.who() + " is not a ServiceAccount's");
    }
    String account = username.substring(SA_PREFIX.length());
    if (!serviceAccounts.contains(account)) {
      return new Verdict.Refused(
          "token of "
              + review.who()
              + " is not the device-driver's "
              + "ServiceAccount "
              + (serviceAccounts.isEmpty()
                  ? "(none is configured: set kdra.slice-publisher.auth.service-accounts)"
                  : serviceAccounts.stream().sorted().toList()));
    }
    String pod = first(review.extra().get(POD_NAME));
    if (pod == null) {
      return new Verdict.Refused("token of " + review.who() + " is not bound to a pod");
    }
    String namespace = account.split(":", 2)[0];
    return new Verdict.Driver(first(review.extra().get(NODE_NAME)), namespace, pod);
  }

  private static String first(List<String> values) {
    return values == null || values.isEmpty() ? null : values.get(0);
  }
}
