package io.kdra.slicepublisher.grpc;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Reviews tokens with the TokenReview API, for the publisher's audience, and lets {@link
 * DriverIdentity} judge the answer. A bound ServiceAccount token (what the kubelet projects into
 * pods) names its pod in the user's extra info; since Kubernetes 1.30 it also names the node
 * ({@code authentication.kubernetes.io/node-name}). Older clusters: the pod is looked up and its
 * {@code spec.nodeName} used. Legacy secret-based tokens name no pod and are refused. Thread-safe;
 * blocks for one or two API calls.
 */
public final class KubernetesTokenReviewer implements TokenReviewer {

  static final String NODE_NAME = DriverIdentity.NODE_NAME;
  static final String POD_NAME = DriverIdentity.POD_NAME;

  private final KubernetesClient client;
  private final DriverIdentity identity;

  public KubernetesTokenReviewer(KubernetesClient client, DriverIdentity identity) {
    this.client = client;
    this.identity = identity;
  }

  @Override
  public String nodeOf(String token) throws Rejected {
    TokenReview review;
    try {
      review =
          client
              .resource(
                  new TokenReviewBuilder()
                      .withNewSpec()
                      .withToken(token)
                      .withAudiences(identity.audience())
                      .endSpec()
                      .build())
              .create();
    } catch (KubernetesClientException e) {
      throw new Rejected("token review failed: " + e.getMessage());
    }
    var status = review.getStatus();
    UserInfo user = status == null ? null : status.getUser();
    DriverIdentity.Verdict verdict =
        identity.judge(
            new DriverIdentity.Review(
                status != null && Boolean.TRUE.equals(status.getAuthenticated()),
                status == null ? null : status.getError(),
                user == null ? null : user.getUsername(),
                user == null ? null : user.getExtra(),
                status == null ? null : status.getAudiences()));
    if (verdict instanceof DriverIdentity.Verdict.Refused r) {
      throw new Rejected(r.reason());
    }
    DriverIdentity.Verdict.Driver driver = (DriverIdentity.Verdict.Driver) verdict;
    if (driver.node() != null) {
      return driver.node();
    }
    Pod p = client.pods().inNamespace(driver.namespace()).withName(driver.pod()).get();
    if (p == null || p.getSpec() == null || p.getSpec().getNodeName() == null) {
      throw new Rejected(
          "pod " + driver.namespace() + "/" + driver.pod() + " of the token runs on no node");
    }
    return p.getSpec().getNodeName();
  }
}
