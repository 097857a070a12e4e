/**
 * DeviceTaintRules (resource.k8s.io/v1, Kubernetes 1.37): the project's model of the kind (fabric8
 * 7.5 lacks it), which devices a rule taints, and rules applied to slices for the allocator.
 */
package io.kdra.core.taint;
