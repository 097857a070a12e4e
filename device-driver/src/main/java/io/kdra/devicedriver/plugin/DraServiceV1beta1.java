package io.kdra.devicedriver.plugin;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourcesRequest;
import io.kdra.devicedriver.kubelet.dra.v1.NodeUnprepareResourcesRequest;
import io.kdra.devicedriver.kubelet.dra.v1beta1.DRAPluginGrpc;
import io.kdra.devicedriver.kubelet.dra.v1beta1.NodePrepareResourcesResponse;
import io.kdra.devicedriver.kubelet.dra.v1beta1.NodeUnprepareResourcesResponse;

/**
 * The {@code k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin} service, for kubelets older than 1.34.
 * Its messages are byte-identical on the wire to v1's (same fields, same numbers; v1 only adds
 * {@code share_id}, which we never set), so each call is re-read as the v1 message, served by
 * {@link DraServiceV1}'s translation, and the answer re-read as the v1beta1 message. Built by hand
 * as a {@link ServerServiceDefinition}, like v1, because extending the generated ImplBase would
 * make Quarkus drop its own gRPC beans.
 */
final class DraServiceV1beta1 {
  private DraServiceV1beta1() {}

  static ServerServiceDefinition definition(PluginCalls calls) {
    return ServerServiceDefinition.builder(DRAPluginGrpc.getServiceDescriptor())
        .addMethod(
            DRAPluginGrpc.getNodePrepareResourcesMethod(),
            ServerCalls.asyncUnaryCall(
                (req, out) ->
                    calls.unary(
                        "v1beta1.NodePrepareResources",
                        out,
                        () -> {
                          NodePrepareResourcesRequest v1 =
                              reread(req, NodePrepareResourcesRequest.parser());
                          return reread(
                              DraServiceV1.prepared(
                                  calls.prepare(DraServiceV1.claims(v1.getClaimsList()))),
                              NodePrepareResourcesResponse.parser());
                        })))
        .addMethod(
            DRAPluginGrpc.getNodeUnprepareResourcesMethod(),
            ServerCalls.asyncUnaryCall(
                (req, out) ->
                    calls.unary(
                        "v1beta1.NodeUnprepareResources",
                        out,
                        () -> {
                          NodeUnprepareResourcesRequest v1 =
                              reread(req, NodeUnprepareResourcesRequest.parser());
                          return reread(
                              DraServiceV1.unprepared(
                                  calls.unprepare(DraServiceV1.claims(v1.getClaimsList()))),
                              NodeUnprepareResourcesResponse.parser());
                        })))
        .build();
  }

  /** The same bytes as the other API version's message. */
  private static <T> T reread(MessageLite message, Parser<T> parser) {
    try {
      return parser.parseFrom(message.toByteString());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("v1 and v1beta1 DRA messages are wire-compatible", e);
    }
  }
}
