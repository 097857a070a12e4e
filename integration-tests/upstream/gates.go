package main

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/dynamic-resource-allocation/structured"
)

// withGates returns the features with the gates of spec set, in the syntax of upstream components'
// --feature-gates flag (Name=bool,...), as dra-alloc's option takes them. Only the gates that
// change the allocator's features are known; an alpha gate switched on makes NewAllocator pick
// the "experimental" implementation, as kube-scheduler does.
func withGates(f structured.Features, spec string) (structured.Features, error) {
	gates := map[string]*bool{
		"DRAAdminAccess":               &f.AdminAccess,
		"DRAConsumableCapacity":        &f.ConsumableCapacity,
		"DRADerivedAttributes":         &f.DerivedAttributes,
		"DRADeviceBindingConditions":   &f.DeviceBindingAndStatus,
		"DRADeviceCompatibilityGroups": &f.CompatibilityGroups,
		"DRADeviceTaints":              &f.DeviceTaints,
		"DRAFractionalCapacityRange":   &f.FractionalCapacityRange,
		"DRAListTypeAttributes":        &f.ListTypeAttributes,
		"DRAOptionalNodeOperations":    &f.OptionalNodeOperations,
		"DRAPartitionableDevices":      &f.PartitionableDevices,
		"DRAPrioritizedList":           &f.PrioritizedList,
	}
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, value, found := strings.Cut(entry, "=")
		if !found {
			return f, fmt.Errorf("missing bool value for %s", entry)
		}
		target, known := gates[strings.TrimSpace(name)]
		if !known {
			return f, fmt.Errorf("unrecognized feature gate: %s", name)
		}
		on, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return f, fmt.Errorf("invalid value of %s: %v", entry, err)
		}
		*target = on
	}
	return f, nil
}
