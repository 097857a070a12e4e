package io.kdra.devicedriver.plugin;

import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.PluginInfo;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.RegistrationGrpc;
import io.kdra.devicedriver.kubelet.pluginregistration.v1.RegistrationStatusResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * The {@code pluginregistration.Registration} service on {@code <registry>/<driver>-reg.sock}: the
 * kubelet's plugin watcher asks for {@link PluginInfo} and then reports whether it accepted us.
 */
final class RegistrationService {
  /** The plugin type the kubelet's DRA handler registers for. */
  static final String PLUGIN_TYPE = "DRAPlugin";

  /**
   * The services on the DRA socket, preferred first: the kubelet takes the first one it knows, so
   * v1 must precede v1beta1 (1.34+ kubelets speak v1; older ones only v1beta1).
   */
  static final List<String> SUPPORTED_VERSIONS = List.of("v1.DRAPlugin", "v1beta1.DRAPlugin");

  private RegistrationService() {}

  /**
   * @param services the services on the DRA socket, {@link #SUPPORTED_VERSIONS} first
   * @param onStatus gets (registered, error) from every NotifyRegistrationStatus
   */
  static ServerServiceDefinition definition(
      String driverName,
      Path draSocket,
      List<String> services,
      BiConsumer<Boolean, String> onStatus) {
    PluginInfo info =
        PluginInfo.newBuilder()
            .setType(PLUGIN_TYPE)
            .setName(driverName)
            .setEndpoint(draSocket.toAbsolutePath().toString())
            .addAllSupportedVersions(services)
            .build();
    return ServerServiceDefinition.builder(RegistrationGrpc.getServiceDescriptor())
        .addMethod(
            RegistrationGrpc.getGetInfoMethod(),
            ServerCalls.asyncUnaryCall(
                (req, out) -> {
                  out.onNext(info);
                  out.onCompleted();
                }))
        .addMethod(
            RegistrationGrpc.getNotifyRegistrationStatusMethod(),
            ServerCalls.asyncUnaryCall(
                (req, out) -> {
                  onStatus.accept(req.getPluginRegistered(), req.getError());
                  out.onNext(RegistrationStatusResponse.getDefaultInstance());
                  out.onCompleted();
                }))
        .build();
  }
}
