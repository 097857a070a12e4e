package io.kdra.slicepublisher.grpc;

import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Singleton;

/**
 * Stands in for the TokenReview API: token "token-for-NODE" is a driver pod on NODE, and so is a
 * JWT whose header part is "token-for-NODE".
 */
@Alternative
@Priority(1)
@Singleton
public class FakeTokenReviewer implements TokenReviewer {

  static final String PREFIX = "token-for-";

  @Override
  public String nodeOf(String token) throws Rejected {
    if (!token.startsWith(PREFIX)) {
      throw new Rejected("token not authenticated");
    }
    return token.substring(PREFIX.length()).split("\\.", 2)[0];
  }
}
