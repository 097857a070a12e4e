/**
 * {@code ExamplesIT}'s harness: an example folder ({@link io.kdra.it.examples.ExampleFolder}), the
 * cluster its {@code cluster/cluster.yaml} stands for ({@link io.kdra.it.examples.ExampleCluster}),
 * applying the folder to a stack as {@code kubectl apply} would ({@link
 * io.kdra.it.examples.ExampleApply}), and the names under which a workload's replicas are compared
 * ({@link io.kdra.it.examples.ReplicaNames}).
 */
package io.kdra.it.examples;
