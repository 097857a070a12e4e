package io.kdra.slicepublisher.domain;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;

/** One API write the syncer must issue. */
public sealed interface SliceWrite {

  /** The name of the slice written. */
  String name();

  /** Create a slice that does not exist. */
  record Create(ResourceSlice slice) implements SliceWrite {
    @Override
    public String name() {
      return slice.getMetadata().getName();
    }
  }

  /** Replace an existing slice; carries the resourceVersion read, for optimistic concurrency. */
  record Update(ResourceSlice slice) implements SliceWrite {
    @Override
    public String name() {
      return slice.getMetadata().getName();
    }
  }

  /** Delete a slice, on the condition that it is still the version read (uid, resourceVersion). */
  record Delete(String name, String uid, String resourceVersion) implements SliceWrite {}
}
