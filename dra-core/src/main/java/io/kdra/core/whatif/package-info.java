/**
 * The what-if run of {@code bin/dra-alloc}: pending claims allocated against a set of objects, pod
 * by pod as kube-scheduler places them, each allocation consuming devices for the next. Here, not
 * in dra-alloc, so that dra-core's own tests replay upstream's golden allocations through the same
 * code the command runs. Pure.
 */
package io.kdra.core.whatif;
