/**
 * The test control plane: kube-apiserver and etcd ({@code ControlPlane}), kube-scheduler and
 * kube-controller-manager ({@code UpstreamControllers}), the multi-node cluster's API server, PKI
 * and address plan, and control-plane faults ({@code ApiServerOutage}, {@code EtcdRestart}).
 */
package io.kdra.it.controlplane;
