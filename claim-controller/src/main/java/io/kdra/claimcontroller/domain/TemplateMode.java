package io.kdra.claimcontroller.domain;

/** Who creates the claims that pods request through a {@code ResourceClaimTemplate}. */
public enum TemplateMode {
  /** This controller creates them (clusters without kube-controller-manager's DRA controller). */
  OWN,
  /** kube-controller-manager creates them; this controller waits for and uses them. */
  ADOPT
}
