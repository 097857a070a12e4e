/**
 * A container registry on loopback ({@code LocalRegistry}) that real nodes pull the built images
 * from, as from a user's registry.
 */
package io.kdra.it.registry;
