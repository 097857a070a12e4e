package io.kdra.slicepublisher.grpc;

/**
 * Whether this replica writes ResourceSlices now, and so takes inventory snapshots (a standby ends
 * streams so that drivers reconnect to the leader). The wiring's lifecycle answers it.
 */
public interface WritingReplica {

  boolean writer();
}
