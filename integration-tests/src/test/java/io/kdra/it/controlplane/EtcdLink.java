package io.kdra.it.controlplane;

import io.kdra.it.support.PausableProxy;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The shared control plane's kube-apiserver reaching etcd through a {@link PausableProxy} that the
 * test may delay (added etcd latency), pause or cut, for one test class. Before the class the
 * kube-apiserver is started again ({@link ApiServerOutage}) with {@code --etcd-servers} at the
 * proxy; after it, again with the address it had, so the next class finds the control plane as it
 * was. Register it before the class's stack (a lower {@code @Order}): the restart is then over
 * before any service starts.
 */
public final class EtcdLink implements BeforeAllCallback, AfterAllCallback {

  private static final String FLAG = "--etcd-servers";
  private static final Duration BACK = Duration.ofSeconds(120);

  private ControlPlane.Running controlPlane;
  private PausableProxy proxy;
  private String direct;

  /** The proxy between kube-apiserver and etcd, while the class runs. */
  public PausableProxy proxy() {
    if (proxy == null) {
      throw new IllegalStateException("the etcd link is made in beforeAll");
    }
    return proxy;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    controlPlane = ControlPlane.running(context);
    ApiServerOutage outage = ApiServerOutage.begin(controlPlane);
    direct = outage.flag(FLAG);
    if (direct == null || direct.contains(",")) {
      outage.end(BACK);
      throw new IllegalStateException("expected one etcd server, not " + direct);
    }
    proxy = PausableProxy.toLocalPorts("etcd-link", List.of(URI.create(direct).getPort()));
    outage.endWith(FLAG, "http://" + proxy.address(), BACK);
    System.out.printf("[control-plane] kube-apiserver reaches etcd through %s%n", proxy.address());
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (proxy == null) {
      return;
    }
    try {
      proxy.delay(Duration.ZERO);
      proxy.heal();
      ApiServerOutage.begin(controlPlane).endWith(FLAG, direct, BACK);
      System.out.printf("[control-plane] kube-apiserver reaches etcd at %s again%n", direct);
    } finally {
      proxy.close();
      proxy = null;
    }
  }
}
