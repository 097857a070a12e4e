package io.kdra.computeclassbridge.k8s;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.computeclassbridge.mapping.JsonSubset;
import io.kdra.computeclassbridge.mapping.Labels;
import io.kdra.computeclassbridge.mapping.SharedDeviceClasses;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.core.model.TraceAnnotation;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.net.HttpURLConnection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Makes the generated objects of one ComputeClass what the mapper says they should be: creates what
 * is missing, rewrites what drifted (hand edits included), deletes what is no longer wanted. It
 * reads live state straight from the API server, not from an informer cache, so a reconcile that
 * follows its own writes never acts on a stale view.
 *
 * <p>Only objects labelled {@code app.kubernetes.io/managed-by=kdra-computeclass-bridge} are ever
 * changed or deleted; an object of the same name without that label is reported as a conflict and
 * left alone. Idempotent: a second call with the same input writes nothing.
 *
 * <p>Each template written (created, or replaced) is a span {@code apply template}, whose context
 * the template carries in {@link TraceAnnotation#KEY}: the trace of every claim made from it links
 * there. The annotation is not part of what is compared, so it causes no writes.
 */
public class GeneratedObjects {

  private final KubernetesClient client;
  private final Tracer tracer;

  public GeneratedObjects(KubernetesClient client, Tracer tracer) {
    this.client = client;
    this.tracer = tracer;
  }

  /**
   * Templates: the desired set for this ComputeClass in all namespaces. A template whose spec
   * changed is deleted and created again, because a ResourceClaimTemplate's spec is immutable;
   * claims already made from it are not affected.
   */
  public ApplyReport applyTemplates(ComputeClass cc, List<ResourceClaimTemplate> desired) {
    Map<String, ResourceClaimTemplate> actual =
        byKey(
            client
                .resources(ResourceClaimTemplate.class)
                .inAnyNamespace()
                .withLabels(Labels.templatesOf(cc.getMetadata().getName()))
                .list()
                .getItems());
    List<String> changes = new ArrayList<>();
    List<String> conflicts = new ArrayList<>();
    for (ResourceClaimTemplate d : desired) {
      ResourceClaimTemplate a = actual.remove(key(d));
      if (a == null) {
        traced(cc, d, "create", () -> create(d, changes, conflicts));
      } else if (!JsonSubset.contains(a.getSpec(), d.getSpec())) {
        traced(
            cc,
            d,
            "replace",
            () -> {
              client.resource(a).withGracePeriod(0).delete();
              client.resource(d).create();
            });
        changes.add("replaced " + describe(d) + " (its spec is immutable)");
      } else if (!JsonSubset.contains(a.getMetadata(), d.getMetadata())) {
        // the same content: it keeps the trace context of the write that made it
        Optional.ofNullable(a.getMetadata().getAnnotations())
            .map(m -> m.get(TraceAnnotation.KEY))
            .ifPresent(tp -> annotate(d, tp));
        client
            .resource(
                new ResourceClaimTemplateBuilder(d)
                    .editMetadata()
                    .withResourceVersion(a.getMetadata().getResourceVersion())
                    .endMetadata()
                    .build())
            .update();
        changes.add("relabelled " + describe(d));
      }
    }
    for (ResourceClaimTemplate leftover : actual.values()) {
      client.resource(leftover).delete();
      changes.add("deleted " + describe(leftover));
    }
    return ApplyReport.of(changes, conflicts);
  }

  /**
   * DeviceClasses: adds this ComputeClass as a user of every desired class and removes it from the
   * classes it no longer uses; a class without users is deleted.
   *
   * @param liveUsers label values of all existing ComputeClasses, see {@link
   *     SharedDeviceClasses#withUser}
   */
  public ApplyReport applyDeviceClasses(
      ComputeClass cc, List<DeviceClass> desired, Set<String> liveUsers) {
    String name = cc.getMetadata().getName();
    Map<String, DeviceClass> actual =
        byKey(client.resources(DeviceClass.class).withLabels(Labels.managed()).list().getItems());
    List<String> changes = new ArrayList<>();
    List<String> conflicts = new ArrayList<>();
    for (DeviceClass d : desired) {
      DeviceClass a = actual.remove(key(d));
      if (a == null) {
        create(d, changes, conflicts);
        continue;
      }
      DeviceClass merged = SharedDeviceClasses.withUser(d, a, liveUsers);
      if (!JsonSubset.contains(a, merged)) {
        client.resource(merged).update();
        changes.add("updated " + describe(d));
      }
    }
    for (DeviceClass a : actual.values()) {
      if (!SharedDeviceClasses.usersOf(a).contains(Labels.value(name))) {
        continue;
      }
      Optional<DeviceClass> released = SharedDeviceClasses.withoutUser(a, name);
      if (released.isPresent()) {
        client.resource(released.get()).update();
        changes.add(
            "released "
                + describe(a)
                + ", still used by "
                + SharedDeviceClasses.usersOf(released.get()));
      } else {
        client.resource(a).delete();
        changes.add("deleted " + describe(a));
      }
    }
    return ApplyReport.of(changes, conflicts);
  }

  /** Runs {@code write} of template {@code t} in a span whose context {@code t} then carries. */
  private void traced(ComputeClass cc, ResourceClaimTemplate t, String operation, Runnable write) {
    Span span =
        tracer
            .spanBuilder("apply template")
            .setAttribute("kdra.computeclass", cc.getMetadata().getName())
            .setAttribute("k8s.namespace.name", t.getMetadata().getNamespace())
            .setAttribute("kdra.template.name", t.getMetadata().getName())
            .setAttribute("kdra.operation", operation)
            .startSpan();
    if (span.getSpanContext().isValid()) {
      Map<String, String> headers = new HashMap<>();
      W3CTraceContextPropagator.getInstance().inject(Context.root().with(span), headers, Map::put);
      Optional.ofNullable(headers.get("traceparent")).ifPresent(tp -> annotate(t, tp));
    }
    try {
      write.run();
    } catch (RuntimeException e) {
      span.recordException(e);
      span.setStatus(StatusCode.ERROR);
      throw e;
    } finally {
      span.end();
    }
  }

  private static void annotate(ResourceClaimTemplate t, String traceparent) {
    Map<String, String> annotations =
        t.getMetadata().getAnnotations() == null
            ? new LinkedHashMap<>()
            : new LinkedHashMap<>(t.getMetadata().getAnnotations());
    annotations.put(TraceAnnotation.KEY, traceparent);
    t.getMetadata().setAnnotations(annotations);
  }

  /** Creates; a same-named object that is not ours is a conflict, one that is ours a race. */
  private <T extends HasMetadata> void create(
      T desired, List<String> changes, List<String> conflicts) {
    try {
      client.resource(desired).create();
      changes.add("created " + describe(desired));
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
      T existing = client.resource(desired).get();
      if (existing != null
          && !Labels.MANAGER.equals(
              existing.getMetadata().getLabels() == null
                  ? null
                  : existing.getMetadata().getLabels().get(Labels.MANAGED_BY))) {
        conflicts.add(
            describe(desired)
                + " already exists and was not generated by the bridge;"
                + " left as it is");
      } else {
        throw e; // ours, created concurrently: the retry will see and update it
      }
    }
  }

  private static <T extends HasMetadata> Map<String, T> byKey(List<T> items) {
    return items.stream()
        .collect(
            Collectors.toMap(
                GeneratedObjects::key, Function.identity(), (x, y) -> x, TreeMap::new));
  }

  private static String key(HasMetadata o) {
    String ns = o.getMetadata().getNamespace();
    return (ns == null ? "" : ns + "/") + o.getMetadata().getName();
  }

  static String describe(HasMetadata o) {
    return o.getKind() + " " + key(o);
  }
}
