package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.ControlPlaneProcesses;
import io.kdra.it.support.Leftovers;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The control plane itself: kube-apiserver and etcd listen on loopback only, both are recorded for
 * the next run to end should this JVM be killed, and its keys are the owner's only.
 */
@ExtendWith(ControlPlane.class)
class ControlPlaneIT {

  private static final Pattern CLIENT_URL = Pattern.compile("http://([0-9.]+):([0-9]+)");

  @Test
  void apiServerAndEtcdListenOnLoopbackOnly(KubernetesClient client) throws IOException {
    List<Integer> ports = new ArrayList<>();
    ports.add(URI.create(client.getConfiguration().getMasterUrl()).getPort());
    ProcessHandle etcd = etcd();
    String[] args = etcd.info().arguments().orElseThrow();
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals("--listen-client-urls")) {
        Matcher m = CLIENT_URL.matcher(args[i + 1]);
        assertThat(m.matches()).as(args[i + 1]).isTrue();
        assertThat(m.group(1)).isEqualTo("127.0.0.1");
        ports.add(Integer.parseInt(m.group(2)));
      }
    }
    assertThat(ports).as("kube-apiserver's and etcd's client ports").hasSize(2);

    List<InetAddress> others = new ArrayList<>();
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (nic.isUp() && !nic.isLoopback()) {
        Collections.list(nic.getInetAddresses()).stream()
            .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress())
            .forEach(others::add);
      }
    }
    assumeFalse(others.isEmpty(), "no network interface besides loopback");
    for (int port : ports) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
      }
      for (InetAddress address : others) {
        assertThatThrownBy(
                () -> {
                  try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress(address, port), 2000);
                  }
                })
            .as("port %d on %s", port, address)
            .isInstanceOf(IOException.class);
      }
    }
  }

  @Test
  void bothProcessesAreRecordedForTheNextRun() throws IOException {
    List<Leftovers.Entry> recorded = ControlPlaneProcesses.recorded();
    List<String> pids = recorded.stream().map(e -> Long.toString(e.pid())).toList();
    assertThat(pids).contains(Long.toString(etcd().pid()));
    assertThat(
            ProcessHandle.current()
                .children()
                .filter(
                    h -> h.info().command().map(c -> c.endsWith("/kube-apiserver")).orElse(false))
                .map(h -> Long.toString(h.pid()))
                .toList())
        .singleElement()
        .isIn(pids);
    // etcd's temporary directories go with it
    assertThat(
            recorded.stream()
                .filter(e -> e.pid() == etcd().pid())
                .findFirst()
                .orElseThrow()
                .directories()
                .toString())
        .contains("/etcddata")
        .contains("/etcdwal");
  }

  /**
   * kube-api-test's keys (the admin's is system:masters) are in a directory of this run's own,
   * which only its owner may enter, and are only the owner's to read; the admin kubeconfig points
   * there, not into the shared cache.
   */
  @Test
  void theKeysAreOwnerOnlyInADirectoryOfTheRunsOwn(ControlPlane.Running controlPlane)
      throws IOException {
    assertThat(mode(controlPlane.dir())).isEqualTo("rwx------");
    assertThat(controlPlane.dir().startsWith(ControlPlane.cacheDir())).as("in the cache").isFalse();
    for (String name : ControlPlane.Running.CREDENTIALS) {
      assertThat(mode(controlPlane.dir().resolve(name))).as(name).isEqualTo("rw-------");
    }
    assertThat(controlPlane.server().getKubeConfigYaml())
        .contains(controlPlane.dir().resolve("client.key").toString());
  }

  static String mode(Path path) throws IOException {
    return java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(path));
  }

  private static ProcessHandle etcd() {
    return ProcessHandle.current()
        .children()
        .filter(
            h ->
                h.info()
                    .command()
                    .map(c -> c.endsWith("/etcd-server") || c.endsWith("/etcd"))
                    .orElse(false))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no etcd child process"));
  }
}
