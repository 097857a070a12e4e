package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Draws pods from the basic stream: pods for most pending claims (one or two each), at times a
 * template and pods that use it; the rest of the claims stay without a pod. The extended profile
 * places them ({@link ProfileShapes#place}).
 */
final class PodDraw {

  private final Random r;
  private final ClaimDraw claims;
  private final ProfileShapes shapes;

  PodDraw(DrawStreams streams, ClaimDraw claims, ProfileShapes shapes) {
    this.r = streams.basic;
    this.claims = claims;
    this.shapes = shapes;
  }

  /** Adds the template (at times) and the pods for {@code pending}. */
  void draw(List<ResourceClaim> pending, List<ResourceClaimTemplate> templates, List<Pod> pods) {
    if (r.nextInt(3) == 0) {
      ResourceClaimTemplate t = new ResourceClaimTemplate();
      ObjectMeta m = new ObjectMeta();
      m.setName("tmpl-0");
      m.setNamespace("default");
      t.setMetadata(m);
      ResourceClaimTemplateSpec ts = new ResourceClaimTemplateSpec();
      ts.setSpec(claims.spec());
      t.setSpec(ts);
      templates.add(t);
    }
    int next = 0;
    int podIndex = 0;
    while (next < pending.size() || (!templates.isEmpty() && podIndex < 2)) {
      List<PodResourceClaim> refs = new ArrayList<>();
      int take = next < pending.size() ? (r.nextInt(3) == 0 ? 2 : 1) : 0;
      if (next < pending.size() && r.nextInt(5) == 0) {
        next++; // this claim stays without a pod and is allocated after the pods
        continue;
      }
      for (int i = 0; i < take && next < pending.size(); i++, next++) {
        PodResourceClaim prc = new PodResourceClaim();
        prc.setName("c" + i);
        prc.setResourceClaimName(pending.get(next).getMetadata().getName());
        refs.add(prc);
      }
      if (!templates.isEmpty() && (take == 0 || r.nextInt(3) == 0)) {
        refs.add(templateUse(templates.get(0)));
      }
      if (refs.isEmpty()) {
        continue;
      }
      Pod pod = pod("pod-" + podIndex++, refs);
      shapes.place(pod.getSpec());
      pods.add(pod);
    }
  }

  /** A pod's use of a claim from the template. */
  static PodResourceClaim templateUse(ResourceClaimTemplate template) {
    PodResourceClaim prc = new PodResourceClaim();
    prc.setName("t");
    prc.setResourceClaimTemplateName(template.getMetadata().getName());
    return prc;
  }

  static Pod pod(String name, List<PodResourceClaim> refs) {
    Pod pod = new Pod();
    ObjectMeta m = new ObjectMeta();
    m.setName(name);
    m.setNamespace("default");
    pod.setMetadata(m);
    PodSpec spec = new PodSpec();
    Container c = new Container();
    c.setName("app");
    c.setImage("registry.k8s.io/pause:3.10");
    spec.setContainers(List.of(c));
    spec.setResourceClaims(new ArrayList<>(refs));
    pod.setSpec(spec);
    return pod;
  }
}
