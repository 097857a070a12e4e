package io.kdra.slicepublisher.grpc;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import java.util.Map;

/**
 * Reviews tokens with the TokenReview API. A bound ServiceAccount token (what kubelet mounts
 * into pods) names its pod in the user's extra info; since Kubernetes 1.30 it also names the
 * node ({@code authentication.kubernetes.io/node-name}). Older clusters: the pod is looked up
 * and its {@code spec.nodeName} used. Legacy secret-based tokens name no pod and are refused.
 * Thread-safe; blocks for one or two API calls.
 */
public final class KubernetesTokenReviewer implements TokenReviewer {

  static final String NODE_NAME = "authentication.kubernetes.io/node-name";
  static final String POD_NAME = "authentication.kubernetes.io/pod-name";
  private static final String SA_PREFIX = "system:serviceaccount:";

  private final KubernetesClient client;

  public KubernetesTokenReviewer(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public String nodeOf(String token) throws Rejected {
    TokenReview review;
    try {
      review = client.resource(new TokenReviewBuilder().withNewSpec().withToken(token).endSpec()
          .build()).create();
    } catch (KubernetesClientException e) {
      throw new Rejected("token review failed: " + e.getMessage());
    }
    if (review.getStatus() == null || !Boolean.TRUE.equals(review.getStatus().getAuthenticated())) {
      String why = review.getStatus() == null ? "" : review.getStatus().getError();
      throw new Rejected("token not authenticated" + (why == null || why.isEmpty() ? "" : ": " + why));
    }
    UserInfo user = review.getStatus().getUser();
    Map<String, List<String>> extra = user == null || user.getExtra() == null
        ? Map.of() : user.getExtra();
    String node = first(extra.get(NODE_NAME));
    if (node != null) {
      return node;
    }
    String pod = first(extra.get(POD_NAME));
    String username = user == null ? "" : String.valueOf(user.getUsername());
    if (pod == null || !username.startsWith(SA_PREFIX)) {
      throw new Rejected("token of " + username + " is not bound to a pod");
    }
    String namespace = username.substring(SA_PREFIX.length()).split(":", 2)[0];
    Pod p = client.pods().inNamespace(namespace).withName(pod).get();
    if (p == null || p.getSpec() == null || p.getSpec().getNodeName() == null) {
      throw new Rejected("pod " + namespace + "/" + pod + " of the token runs on no node");
    }
    return p.getSpec().getNodeName();
  }

  private static String first(List<String> values) {
    return values == null || values.isEmpty() ? null : values.get(0);
  }
}
