package io.kdra.devicedriver.plugin;

import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;
import io.kdra.devicedriver.kubelet.dra.v1.Claim;
import io.kdra.devicedriver.kubelet.dra.v1.DRAPluginGrpc;
import io.kdra.devicedriver.kubelet.dra.v1.Device;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourceResponse;
import io.kdra.devicedriver.kubelet.dra.v1.NodePrepareResourcesResponse;
import io.kdra.devicedriver.kubelet.dra.v1.NodeUnprepareResourceResponse;
import io.kdra.devicedriver.kubelet.dra.v1.NodeUnprepareResourcesResponse;
import java.util.List;
import java.util.Map;

/**
 * The {@code k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin} service: translates between the v1 wire
 * messages and {@link DraPlugin}. Built by hand as a {@link ServerServiceDefinition} because
 * extending the generated ImplBase would make Quarkus drop its own gRPC beans. {@link
 * DraServiceV1beta1} reuses it through the identical wire format.
 */
final class DraServiceV1 {
  private DraServiceV1() {}

  static ServerServiceDefinition definition(PluginCalls calls) {
    return ServerServiceDefinition.builder(DRAPluginGrpc.getServiceDescriptor())
        .addMethod(
            DRAPluginGrpc.getNodePrepareResourcesMethod(),
            ServerCalls.asyncUnaryCall(
                (req, out) ->
                    calls.unary(
                        "v1.NodePrepareResources",
                        out,
                        () -> prepared(calls.prepare(claims(req.getClaimsList()))))))
        .addMethod(
            DRAPluginGrpc.getNodeUnprepareResourcesMethod(),
            ServerCalls.asyncUnaryCall(
                (req, out) ->
                    calls.unary(
                        "v1.NodeUnprepareResources",
                        out,
                        () -> unprepared(calls.unprepare(claims(req.getClaimsList()))))))
        .build();
  }

  static List<ClaimRef> claims(List<Claim> claims) {
    return claims.stream()
        .map(c -> new ClaimRef(c.getNamespace(), c.getUid(), c.getName()))
        .toList();
  }

  static NodePrepareResourcesResponse prepared(Map<String, PrepareResult> results) {
    NodePrepareResourcesResponse.Builder response = NodePrepareResourcesResponse.newBuilder();
    results.forEach(
        (uid, result) -> {
          NodePrepareResourceResponse.Builder one =
              NodePrepareResourceResponse.newBuilder().setError(result.error());
          for (PreparedDevice d : result.devices()) {
            one.addDevices(
                Device.newBuilder()
                    .addAllRequestNames(d.requestNames())
                    .setPoolName(d.poolName())
                    .setDeviceName(d.deviceName())
                    .addAllCdiDeviceIds(d.cdiDeviceIds()));
          }
          response.putClaims(uid, one.build());
        });
    return response.build();
  }

  static NodeUnprepareResourcesResponse unprepared(Map<String, String> results) {
    NodeUnprepareResourcesResponse.Builder response = NodeUnprepareResourcesResponse.newBuilder();
    results.forEach(
        (uid, error) ->
            response.putClaims(
                uid, NodeUnprepareResourceResponse.newBuilder().setError(error).build()));
    return response.build();
  }
}
