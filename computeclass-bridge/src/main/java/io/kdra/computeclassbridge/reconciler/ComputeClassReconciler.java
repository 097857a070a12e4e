package io.kdra.computeclassbridge.reconciler;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.FieldSelector;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.SecondaryToPrimaryMapper;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kdra.computeclassbridge.k8s.ApplyReport;
import io.kdra.computeclassbridge.k8s.GeneratedObjects;
import io.kdra.computeclassbridge.k8s.ScaleOut;
import io.kdra.computeclassbridge.mapping.ComputeClassMapper;
import io.kdra.computeclassbridge.mapping.Labels;
import io.kdra.computeclassbridge.mapping.Mapping;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.ComputeClassStatus;
import io.kdra.computeclassbridge.observability.BridgeMetrics;
import io.kdra.events.EventRecorder;
import io.kdra.leadership.FencedWrite;
import io.kdra.leadership.Leadership;
import io.kdra.leadership.LeadershipRequeue;
import io.kdra.leadership.SyncedInformers;
import java.net.HttpURLConnection;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jboss.logging.Logger;

/**
 * Keeps each ComputeClass's DeviceClasses and ResourceClaimTemplates equal to what {@link
 * ComputeClassMapper} derives from it, and says how that went in its status and Events.
 * Orchestration only: read (namespaces, catalog), map (pure), apply, aggregate status (pure).
 *
 * <p>Besides its primary it is woken by the generated objects (a hand edit or deletion is put
 * back), by namespaces (one labelled later gets its templates) and by the catalog ConfigMap.
 * Deletion goes through a finalizer so that exactly this ComputeClass's objects are removed while
 * it still exists to be named; owner references let Kubernetes' garbage collector finish the job if
 * the finalizer is ever removed by hand.
 *
 * <p>The finalizer is this reconciler's to add and remove, not the operator SDK's: every replica
 * runs the SDK's event processing ({@code OperatorSdkElection}), and the SDK's own finalizer
 * handling (a {@code Cleaner}) adds the finalizer before the reconciler is called, so a standby
 * wrote it. {@link #reconcile} adds it while leading, before any object is made, and {@link
 * DeletingComputeClasses} runs the cleanup of a class being deleted, which the SDK does not hand to
 * a reconciler that is no {@code Cleaner}. A class's apply and its cleanup never overlap ({@link
 * ComputeClassLocks}), as the SDK made them when it ran the cleanup.
 */
@ControllerConfiguration(name = "computeclass")
public class ComputeClassReconciler implements Reconciler<ComputeClass> {

  /** Ours, not the SDK's default, which would sit in GKE's API group. */
  public static final String FINALIZER = "computeclass.kdra.io/cleanup";

  private static final Logger LOG = Logger.getLogger(ComputeClassReconciler.class);

  /** After a 409: soon, since the next attempt reads the objects afresh. */
  static final Duration CONFLICT_RETRY = Duration.ofMillis(200);

  private final ReconcilerSettings settings;
  private final CatalogSource catalogs;
  private final GeneratedObjects objects;
  private final ScaleOut scaleOut;
  private final EventRecorder events;
  private final ComputeClassMapper mapper;
  private final NamespaceSelection selection;
  private final BridgeMetrics metrics;
  private final Clock clock;
  private final Leadership leadership;
  private final SyncedInformers informers;
  private final ComputeClassLocks locks = new ComputeClassLocks();
  private InformerEventSource<Namespace, ComputeClass> namespaces;
  private InformerEventSource<ConfigMap, ComputeClass> catalogMap;
  private IndexerResourceCache<ComputeClass> primaries;
  private KubernetesClient client;

  /** Collaborators as {@code BridgeBeans} wires them. */
  public ComputeClassReconciler(
      ReconcilerSettings settings,
      CatalogSource catalogs,
      GeneratedObjects objects,
      ScaleOut scaleOut,
      EventRecorder events,
      ComputeClassMapper mapper,
      NamespaceSelection selection,
      BridgeMetrics metrics,
      Clock clock,
      Leadership leadership,
      SyncedInformers informers) {
    this.settings = settings;
    this.catalogs = catalogs;
    this.objects = objects;
    this.scaleOut = scaleOut;
    this.events = events;
    this.mapper = mapper;
    this.selection = selection;
    this.metrics = metrics;
    this.clock = clock;
    this.leadership = leadership;
    this.informers = informers;
  }

  @Override
  public List<EventSource<?, ComputeClass>> prepareEventSources(
      EventSourceContext<ComputeClass> context) {
    IndexerResourceCache<ComputeClass> primaries = context.getPrimaryCache();
    this.primaries = primaries;
    this.client = context.getClient();
    DeletingComputeClasses.start(
        primaries,
        FINALIZER,
        this::cleanup,
        () -> leadership.leading() && informers.synced(),
        DeletingComputeClasses.SWEEP_INTERVAL);
    metrics.computeClasses(
        () -> primaries.list().count(),
        () -> primaries.list().filter(c -> degradedMessage(c.getStatus()).isPresent()).count());
    SecondaryToPrimaryMapper<HasMetadata> all =
        ignored -> primaries.list().map(ResourceID::fromResource).collect(Collectors.toSet());
    List<EventSource<?, ComputeClass>> sources = new ArrayList<>();
    // a replica that does not lead leaves every ComputeClass alone: each is reconciled once it
    // leads
    sources.add(
        new LeadershipRequeue<ComputeClass>(
            leadership, () -> primaries.list().map(ResourceID::fromResource)));
    namespaces =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(Namespace.class, ComputeClass.class)
                .withName("namespaces")
                .withSecondaryToPrimaryMapper(all::toPrimaryResourceIDs)
                .build(),
            context);
    sources.add(namespaces);
    sources.add(
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(ResourceClaimTemplate.class, ComputeClass.class)
                .withName("templates")
                .withWatchAllNamespaces()
                .withLabelSelector(Labels.MANAGED_BY + "=" + Labels.MANAGER)
                .withSecondaryToPrimaryMapper(ComputeClassReconciler::usersOf)
                .build(),
            context));
    sources.add(
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(DeviceClass.class, ComputeClass.class)
                .withName("deviceclasses")
                .withLabelSelector(Labels.MANAGED_BY + "=" + Labels.MANAGER)
                .withSecondaryToPrimaryMapper(ComputeClassReconciler::usersOf)
                .build(),
            context));
    settings
        .catalogConfigMap()
        .ifPresent(
            name -> {
              String ns = settings.catalogNamespace().orElse(context.getClient().getNamespace());
              catalogMap =
                  new InformerEventSource<>(
                      InformerEventSourceConfiguration.from(ConfigMap.class, ComputeClass.class)
                          .withName("catalog")
                          .withNamespaces(ns)
                          // by name on the server: the chart grants list and watch of this
                          // one ConfigMap only, which needs a metadata.name field selector
                          .withFieldSelector(
                              new FieldSelector(new FieldSelector.Field("metadata.name", name)))
                          .withSecondaryToPrimaryMapper(all::toPrimaryResourceIDs)
                          .build(),
                      context);
              sources.add(catalogMap);
            });
    return sources;
  }

  @Override
  public UpdateControl<ComputeClass> reconcile(ComputeClass cc, Context<ComputeClass> context) {
    String name = cc.getMetadata().getName();
    if (FencedWrite.next(leadership.leading()) == FencedWrite.AWAIT_LEADERSHIP) {
      // a replica that does not lead (a standby, or one that lost the Lease) keeps its informers
      // and its reconciles but writes nothing (every replica's event processing runs:
      // OperatorSdkElection); the leader applies the class, and this replica reconciles every
      // ComputeClass again once it leads (LeadershipRequeue)
      LOG.debugf("ComputeClass %s: not leading; left to the leader", name);
      metrics.reconciled(BridgeMetrics.Outcome.STANDBY);
      return UpdateControl.noUpdate();
    }
    if (cc.isMarkedForDeletion()) {
      // not dispatched by the SDK (no Cleaner): DeletingComputeClasses cleans it up
      return UpdateControl.noUpdate();
    }
    if (!informers.synced()) {
      // an informer whose first list failed is still retrying: with the namespaces or the catalog
      // half listed, objects that are wanted would look unwanted and be deleted
      LOG.debugf(
          "ComputeClass %s: informers not listed yet; looking again in %s", name, standbyRetry());
      return UpdateControl.<ComputeClass>noUpdate().rescheduleAfter(standbyRetry());
    }
    // the whole apply under the class's lock, which its cleanup takes too: a class marked for
    // deletion meanwhile is cleaned up after this apply, and one cleaned up before it is skipped
    return locks.holding(name, () -> reconcileHeld(cc, context));
  }

  private UpdateControl<ComputeClass> reconcileHeld(
      ComputeClass cc, Context<ComputeClass> context) {
    String name = cc.getMetadata().getName();
    if (!stillWanted(context.getPrimaryCache().get(ResourceID.fromResource(cc)))) {
      LOG.debugf("ComputeClass %s: being deleted or gone; left to its cleanup", name);
      return UpdateControl.noUpdate();
    }
    LOG.debugf(
        "ComputeClass %s: reconciling generation %d (resourceVersion %s)",
        name, generation(cc), cc.getMetadata().getResourceVersion());
    try {
      // before any object is made, so that a deletion always cleans them up (the SDK's order)
      ComputeClass held = context.resourceOperations().addFinalizer(FINALIZER);
      return apply(held, context);
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        LOG.debugf("ComputeClass %s: failed: %s", name, e.getMessage());
        metrics.reconciled(BridgeMetrics.Outcome.FAILED);
        throw e;
      }
      // Two reconciles touching one shared DeviceClass, or a concurrent edit: a routine race,
      // not an error. Read again shortly; the SDK's error path would log a stack trace.
      LOG.debugf(
          "ComputeClass %s: %s changed meanwhile; applying again",
          cc.getMetadata().getName(), conflictTarget(e));
      metrics.reconciled(BridgeMetrics.Outcome.CONFLICT);
      return UpdateControl.<ComputeClass>noUpdate().rescheduleAfter(CONFLICT_RETRY);
    } catch (RuntimeException e) {
      metrics.reconciled(BridgeMetrics.Outcome.FAILED);
      throw e;
    }
  }

  /**
   * How soon a leader whose informers have not listed yet looks again: as often as it campaigns.
   */
  private Duration standbyRetry() {
    return settings.standbyRetry();
  }

  private static String conflictTarget(KubernetesClientException e) {
    return e.getStatus() != null && e.getStatus().getDetails() != null
        ? e.getStatus().getDetails().getKind() + " " + e.getStatus().getDetails().getName()
        : "an object it writes";
  }

  private UpdateControl<ComputeClass> apply(ComputeClass cc, Context<ComputeClass> context) {
    CatalogSource.Effective catalog = catalogs.effective(catalogOverlay());
    SortedSet<String> selected = selection.select(namespaces.list(ns -> true).toList());
    Mapping mapping = mapper.map(cc, catalog.catalog(), selected);
    ApplyReport report =
        objects
            .applyDeviceClasses(
                cc, mapping.deviceClasses(), liveUsers(context.getPrimaryCache(), Optional.empty()))
            .plus(objects.applyTemplates(cc, mapping.templates()))
            .plus(scaleOut.apply(cc));
    ComputeClassStatus old = cc.getStatus();
    ComputeClassStatus status =
        StatusAggregator.aggregate(
            old,
            generation(cc),
            mapping,
            cc.getMetadata().getName(),
            mapping.templates().size(),
            report.conflicts(),
            catalog.problem(),
            clock.instant());
    LOG.debugf(
        "ComputeClass %s: changes %s, conflicts %s",
        name(cc), report.changes(), report.conflicts());
    recordEvents(cc, report, old, status);
    if (!status.equals(old)) {
      writeStatus(cc, status, context);
    }
    metrics.reconciled(
        report.changes().isEmpty()
            ? BridgeMetrics.Outcome.UNCHANGED
            : BridgeMetrics.Outcome.APPLIED);
    return UpdateControl.noUpdate();
  }

  /**
   * Replaces the status of {@code cc} as read, refused with 409 if it changed since (a spec edit,
   * another writer of the status): then the conflict path applies it again. Written here rather
   * than through {@code UpdateControl.patchStatus}, whose patch (operator SDK 5.3.0) checks no
   * resourceVersion and makes the SDK drop the events of every change older than its response: a
   * spec edit made while the status was being computed was never reconciled. The event of this
   * write starts no reconcile: its generation is unchanged.
   */
  private static void writeStatus(
      ComputeClass cc, ComputeClassStatus status, Context<ComputeClass> context) {
    cc.setStatus(status);
    ComputeClass written = context.getClient().resource(cc).updateStatus();
    LOG.debugf(
        "ComputeClass %s: status written (resourceVersion %s)",
        name(cc), written.getMetadata().getResourceVersion());
  }

  private static String name(ComputeClass cc) {
    return cc.getMetadata().getName();
  }

  /**
   * Removes what {@code cc}, being deleted, generated, then its finalizer ({@link
   * DeletingComputeClasses}, on the leader).
   */
  void cleanup(ComputeClass cc) {
    locks.holding(
        cc.getMetadata().getName(),
        () -> {
          cleanupHeld(cc);
          return null;
        });
  }

  /**
   * Whether a class whose latest cached copy is {@code latest} is to be applied: not once it is
   * marked for deletion (its cleanup may have run already) or gone. The cache is the one the sweep
   * of {@link DeletingComputeClasses} reads, and a deletion is never undone, so a reconcile that
   * takes the class's lock after its cleanup always sees this.
   */
  static boolean stillWanted(Optional<ComputeClass> latest) {
    return latest.filter(c -> !c.isMarkedForDeletion()).isPresent();
  }

  /** Whether the cleanup of {@code name} waits for work on it that runs now. */
  boolean cleanupWaits(String name) {
    return locks.awaited(name);
  }

  private void cleanupHeld(ComputeClass cc) {
    ApplyReport report =
        scaleOut
            .remove(cc)
            .plus(objects.applyTemplates(cc, List.of()))
            .plus(
                objects.applyDeviceClasses(
                    cc, List.of(), liveUsers(primaries, Optional.of(cc.getMetadata().getName()))));
    if (!report.changes().isEmpty()) {
      events.normal(cc, "Removed", String.join("; ", report.changes()));
    }
    client
        .resources(ComputeClass.class)
        .withName(cc.getMetadata().getName())
        .edit(
            latest -> {
              latest.removeFinalizer(FINALIZER);
              return latest;
            });
  }

  @Override
  public ErrorStatusUpdateControl<ComputeClass> updateErrorStatus(
      ComputeClass cc, Context<ComputeClass> context, Exception e) {
    // A conflict is two reconciles touching one shared DeviceClass, or a concurrent edit: the
    // retry reads the new version and succeeds, so it is not worth a warning.
    if (!(e instanceof KubernetesClientException k
        && k.getCode() == HttpURLConnection.HTTP_CONFLICT)) {
      events.warning(cc, "ApplyFailed", "could not apply the generated objects: " + e.getMessage());
    }
    return ErrorStatusUpdateControl.noStatusUpdate();
  }

  private void recordEvents(
      ComputeClass cc, ApplyReport report, ComputeClassStatus old, ComputeClassStatus status) {
    if (!report.changes().isEmpty()) {
      events.normal(cc, "Applied", String.join("; ", report.changes()));
    }
    Optional<String> degraded = degradedMessage(status);
    if (degraded.isPresent() && !degraded.equals(degradedMessage(old))) {
      events.warning(cc, "Degraded", degraded.get());
    }
  }

  private static Optional<String> degradedMessage(ComputeClassStatus status) {
    return status == null
        ? Optional.empty()
        : status.getConditions().stream()
            .filter(
                c -> StatusAggregator.DEGRADED.equals(c.getType()) && "True".equals(c.getStatus()))
            .map(c -> c.getMessage())
            .findFirst();
  }

  private Optional<String> catalogOverlay() {
    if (catalogMap == null) {
      return Optional.empty();
    }
    return catalogMap
        .list(cm -> true)
        .findFirst()
        .map(cm -> cm.getData() == null ? null : cm.getData().get(settings.catalogKey()));
  }

  /** Label values of the ComputeClasses that exist, minus one being deleted. */
  private static Set<String> liveUsers(Cache<ComputeClass> classes, Optional<String> leaving) {
    return classes
        .list()
        .map(c -> c.getMetadata().getName())
        .filter(n -> leaving.map(l -> !l.equals(n)).orElse(true))
        .map(Labels::value)
        .collect(Collectors.toSet());
  }

  /** The ComputeClasses a generated object belongs to: owner references, then labels. */
  static Set<ResourceID> usersOf(HasMetadata generated) {
    Stream<String> owners =
        generated.getMetadata().getOwnerReferences().stream()
            .filter(o -> "ComputeClass".equals(o.getKind()))
            .map(o -> o.getName());
    Map<String, String> labels =
        Optional.ofNullable(generated.getMetadata().getLabels()).orElse(Map.of());
    Stream<String> labelled =
        labels.entrySet().stream()
            .flatMap(
                e ->
                    e.getKey().startsWith(Labels.USED_BY_PREFIX)
                        ? Stream.of(e.getKey().substring(Labels.USED_BY_PREFIX.length()))
                        : Labels.COMPUTE_CLASS.equals(e.getKey())
                            ? Stream.of(e.getValue())
                            : Stream.empty());
    return Stream.concat(owners, labelled).map(ResourceID::new).collect(Collectors.toSet());
  }

  private static long generation(ComputeClass cc) {
    Long g = cc.getMetadata().getGeneration();
    return g == null ? 0 : g;
  }
}
