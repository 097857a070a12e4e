package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.kdra.claimcontroller.domain.ClaimLookup;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What the phases read beyond one pod, as kube-scheduler's DRA manager ({@code dra_manager.go})
 * gives its plugin: the cluster's objects ({@link ClusterView}), this process's writes the
 * informers do not show yet ({@link RecentWrites}, the assume cache), the claims as the two
 * together show them ({@link #claims}), what every claim's allocation holds ({@link
 * AllocatedClaims}, upstream's {@code allocateddevices.go}) and what each node's pods use ({@link
 * NodeUsageCache}). The last two are kept across attempts from the view's change notices, and read
 * under the scheduling lock.
 */
final class DraManager {

  private final ClusterView view;
  private final RecentWrites recent;
  private final AllocatedClaims allocated;
  private final NodeUsageCache usage;

  DraManager(ClusterView view, RecentWrites recent) {
    this.view = view;
    this.recent = recent;
    AtomicBoolean live = new AtomicBoolean();
    this.allocated =
        AllocatedClaims.over(
            k -> view.claim(k.namespace(), k.name()), view::claims, recent, live::get);
    this.usage = new NodeUsageCache(k -> view.pod(k.namespace(), k.name()), view::pods, live::get);
    live.set(
        view.subscribe(
            new ClusterView.Changes() {
              @Override
              public void claim(String namespace, String name) {
                allocated.claimChanged(namespace, name);
              }

              @Override
              public void claimDeleted(String uid) {
                recent.claimDeleted(uid);
              }

              @Override
              public void pod(String namespace, String name) {
                usage.podChanged(namespace, name);
              }
            }));
  }

  ClusterView view() {
    return view;
  }

  RecentWrites recent() {
    return recent;
  }

  AllocatedClaims allocated() {
    return allocated;
  }

  NodeUsageCache usage() {
    return usage;
  }

  /**
   * An attempt's {@code claims}, resolved before the scheduling lock, as {@link #claims} shows them
   * now: read again under the lock, as upstream's PreFilter reads them from its assume cache inside
   * the one scheduling cycle. A pod's claim that another pod shares may have been allocated (and
   * assumed) by that pod's attempt since: allocating it again would replace that allocation in the
   * assume cache, and its devices would look free to the next claim while the first is written. A
   * claim gone or replaced since (another UID at its name) keeps the attempt's copy, with its
   * assumed allocation; PreBind finds it stale.
   */
  List<ResourceClaim> current(List<ResourceClaim> claims) {
    ClaimLookup now = claims();
    List<ResourceClaim> out = new ArrayList<>(claims.size());
    for (ResourceClaim c : claims) {
      String uid = c.getMetadata().getUid();
      out.add(
          now.claim(c.getMetadata().getNamespace(), c.getMetadata().getName())
              .filter(read -> uid.equals(read.getMetadata().getUid()))
              .orElseGet(() -> recent.withAssumed(c)));
    }
    return out;
  }

  /**
   * Claims as the informers show them, with this controller's created claims and assumed
   * allocations they do not show yet: O(1) and an index lookup, never a scan of every claim.
   */
  ClaimLookup claims() {
    return new ClaimLookup() {
      @Override
      public Optional<ResourceClaim> claim(String namespace, String name) {
        return view.claim(namespace, name)
            .or(() -> recent.created(namespace, name))
            .map(recent::withAssumed);
      }

      @Override
      public List<ResourceClaim> ownedBy(String namespace, String podUid) {
        Map<String, ResourceClaim> byUid = new LinkedHashMap<>();
        view.claimsOwnedBy(namespace, podUid).forEach(c -> byUid.put(c.getMetadata().getUid(), c));
        recent
            .createdFor(namespace, podUid)
            .forEach(c -> byUid.putIfAbsent(c.getMetadata().getUid(), c));
        return byUid.values().stream().map(recent::withAssumed).toList();
      }

      @Override
      public Optional<ResourceClaimTemplate> template(String namespace, String name) {
        return view.template(namespace, name);
      }
    };
  }
}
