package main

import (
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The API server's defaulting for resource.k8s.io/v1 (kubernetes v1.37.2,
// pkg/apis/resource/v1/defaults.go and zz_generated.defaults.go), which this program cannot
// import: upstream's allocator expects defaulted objects and fails a request whose
// allocationMode is empty ("unsupported count mode"), while input files, like kubectl
// manifests, usually leave it out.

func defaultExact(r *resourceapi.ExactDeviceRequest) {
	if r.AllocationMode == "" {
		r.AllocationMode = resourceapi.DeviceAllocationModeExactCount
	}
	if r.AllocationMode == resourceapi.DeviceAllocationModeExactCount && r.Count == 0 {
		r.Count = 1
	}
	defaultTolerations(r.Tolerations)
}

func defaultSub(r *resourceapi.DeviceSubRequest) {
	if r.AllocationMode == "" {
		r.AllocationMode = resourceapi.DeviceAllocationModeExactCount
	}
	if r.AllocationMode == resourceapi.DeviceAllocationModeExactCount && r.Count == 0 {
		r.Count = 1
	}
	defaultTolerations(r.Tolerations)
}

func defaultTolerations(ts []resourceapi.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourceapi.DeviceTolerationOpEqual
		}
	}
}

func defaultClaimSpec(spec *resourceapi.ResourceClaimSpec) {
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if r.Exactly != nil {
			defaultExact(r.Exactly)
		}
		for j := range r.FirstAvailable {
			defaultSub(&r.FirstAvailable[j])
		}
	}
}

func defaultClaim(c *resourceapi.ResourceClaim) {
	defaultClaimSpec(&c.Spec)
	if c.Status.Allocation != nil {
		for i := range c.Status.Allocation.Devices.Results {
			defaultTolerations(c.Status.Allocation.Devices.Results[i].Tolerations)
		}
	}
}

func defaultSlice(s *resourceapi.ResourceSlice, now time.Time) {
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		for j := range d.Taints {
			if d.Taints[j].TimeAdded == nil {
				d.Taints[j].TimeAdded = &metav1.Time{Time: now.Truncate(time.Second)}
			}
		}
	}
}
