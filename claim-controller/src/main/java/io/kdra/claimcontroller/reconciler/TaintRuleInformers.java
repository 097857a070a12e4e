package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRuleSpec;
import io.kdra.core.taint.DeviceTaintRuleStatus;
import io.kdra.core.taint.DeviceTaintSelector;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.jboss.logging.Logger;

/**
 * Whether the API server serves {@code resource.k8s.io/v1} DeviceTaintRules (Kubernetes 1.37 on):
 * asked once per informer set-up through discovery. The model classes are dra-core's (fabric8 lacks
 * the kind), registered here for the native image's Jackson.
 */
@RegisterForReflection(
    targets = {
      DeviceTaintRule.class,
      DeviceTaintRuleSpec.class,
      DeviceTaintSelector.class,
      DeviceTaintRuleStatus.class
    })
final class TaintRuleInformers {

  private static final Logger LOG = Logger.getLogger(TaintRuleInformers.class);

  private TaintRuleInformers() {}

  static boolean served(KubernetesClient client) {
    boolean served;
    try {
      served = client.supports(DeviceTaintRule.class);
    } catch (RuntimeException e) {
      LOG.warnf("cannot tell whether DeviceTaintRules are served (%s): not watching them", e);
      return false;
    }
    if (!served) {
      LOG.info("the API server serves no resource.k8s.io/v1 DeviceTaintRules: none applied");
    }
    return served;
  }
}
