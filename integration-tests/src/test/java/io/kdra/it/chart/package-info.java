/**
 * kdra's Helm chart as the tests use it: rendered ({@code KdraChart}, {@code HelmTemplate}) or
 * installed ({@code HelmRelease}), and cert-manager's controllers for the webhook's certificates.
 */
package io.kdra.it.chart;
