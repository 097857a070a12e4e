/**
 * Nodes for the tests: simulated nodes with the in-JVM test kubelet ({@code TestKubelet}), real
 * nodes with kubelet and containerd ({@code RealNode}), their cgroups and pod network, and the
 * multi-node cluster with its network ({@code MultiNodeCluster}).
 */
package io.kdra.it.nodes;
