package io.kdra.devicedriver.testing;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.devicedriver.prepare.ClaimReader;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/** A {@link ClaimReader} over a map; counts reads and lists. */
public final class FakeClaimReader implements ClaimReader {
  private final Map<String, ResourceClaim> claims = new ConcurrentHashMap<>();
  public final AtomicInteger reads = new AtomicInteger();
  public final AtomicInteger lists = new AtomicInteger();
  public volatile boolean broken;

  public FakeClaimReader add(ResourceClaim claim) {
    claims.put(claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName(), claim);
    return this;
  }

  public FakeClaimReader remove(String namespace, String name) {
    claims.remove(namespace + "/" + name);
    return this;
  }

  @Override
  public Optional<ResourceClaim> read(String namespace, String name) throws ClaimReadException {
    reads.incrementAndGet();
    if (broken) {
      throw new ClaimReadException(
          "reading resourceclaim " + namespace + "/" + name + " failed: HTTP 503", null);
    }
    return Optional.ofNullable(claims.get(namespace + "/" + name));
  }

  @Override
  public Map<String, ResourceClaim> findByUid(Set<String> uids) throws ClaimReadException {
    lists.incrementAndGet();
    if (broken) {
      throw new ClaimReadException("listing resourceclaims failed: HTTP 503", null);
    }
    return claims.values().stream()
        .filter(c -> uids.contains(c.getMetadata().getUid()))
        .collect(Collectors.toMap(c -> c.getMetadata().getUid(), c -> c));
  }
}
