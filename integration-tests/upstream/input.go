package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// inputs holds the objects of all input files, each kind in input order, as dra-alloc's Inputs.
type inputs struct {
	classes   []*resourceapi.DeviceClass
	slices    []*resourceapi.ResourceSlice
	claims    []*resourceapi.ResourceClaim
	templates []*resourceapi.ResourceClaimTemplate
	nodes     []*v1.Node
	pods      []*v1.Pod
}

// inputError is bad input: exit status 2.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

func badInput(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

// readFile reads one YAML or JSON file ("-" is stdin): single objects, multi-document streams
// and kind: List (or *List with items) wrappers, like dra-alloc's InputReader. Unknown kinds are
// skipped with a warning; unknown fields are ignored, as dra-alloc ignores them.
func readFile(file string, stdin io.Reader, warnings io.Writer, into *inputs) error {
	label := file
	var data []byte
	var err error
	if file == "-" {
		label = "<stdin>"
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return badInput("%s: no such file", label)
		}
		return badInput("%s: cannot read: %v", label, err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for index := 1; ; index++ {
		var doc any
		if err := decoder.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return badInput("%s: not valid YAML or JSON: %v", label, err)
		}
		if doc == nil {
			continue
		}
		if err := add(label, fmt.Sprintf("document %d", index), doc, warnings, into); err != nil {
			return err
		}
	}
}

func add(file, where string, doc any, warnings io.Writer, into *inputs) error {
	obj, ok := doc.(map[string]any)
	if !ok {
		return badInput("%s: %s: expected an object, found %s", file, where, jsonType(doc))
	}
	kind, _ := obj["kind"].(string)
	if items, has := obj["items"]; kind == "List" || (strings.HasSuffix(kind, "List") && has) {
		if items == nil {
			return nil
		}
		list, ok := items.([]any)
		if !ok {
			return badInput("%s: %s (%s): field items: expected a list", file, where, kind)
		}
		for i, item := range list {
			if err := add(file, fmt.Sprintf("%s item %d", where, i), item, warnings, into); err != nil {
				return err
			}
		}
		return nil
	}
	name := ""
	if meta, ok := obj["metadata"].(map[string]any); ok {
		name, _ = meta["name"].(string)
	}
	object := where
	if kind != "" {
		if name == "" {
			name = "(unnamed)"
		}
		object = kind + " " + name + " (" + where + ")"
	}
	if kind == "" {
		return badInput("%s: %s: field kind: missing", file, where)
	}
	resourceKind := kind != "Node" && kind != "Pod"
	known := map[string]bool{"DeviceClass": true, "ResourceSlice": true, "ResourceClaim": true,
		"ResourceClaimTemplate": true, "Node": true, "Pod": true}
	if !known[kind] {
		fmt.Fprintf(warnings, "dra-alloc-upstream: %s: skipping %s: kind not used\n", file, object)
		return nil
	}
	if apiVersion, _ := obj["apiVersion"].(string); resourceKind && apiVersion != "resource.k8s.io/v1" {
		return badInput("%s: %s: field apiVersion: %q is not supported, use resource.k8s.io/v1", file, object, apiVersion)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return badInput("%s: %s: %v", file, object, err)
	}
	convert := func(target any) error {
		if err := json.Unmarshal(raw, target); err != nil {
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) {
				return badInput("%s: %s: field %s: cannot use %s as %s", file, object, typeErr.Field, typeErr.Value, typeErr.Type)
			}
			return badInput("%s: %s: %v", file, object, err)
		}
		return nil
	}
	switch kind {
	case "DeviceClass":
		c := &resourceapi.DeviceClass{}
		err = convert(c)
		into.classes = append(into.classes, c)
	case "ResourceSlice":
		s := &resourceapi.ResourceSlice{}
		err = convert(s)
		defaultSlice(s, time.Now())
		into.slices = append(into.slices, s)
	case "ResourceClaim":
		c := &resourceapi.ResourceClaim{}
		err = convert(c)
		defaultClaim(c)
		into.claims = append(into.claims, c)
	case "ResourceClaimTemplate":
		t := &resourceapi.ResourceClaimTemplate{}
		err = convert(t)
		defaultClaimSpec(&t.Spec.Spec)
		into.templates = append(into.templates, t)
	case "Node":
		n := &v1.Node{}
		err = convert(n)
		into.nodes = append(into.nodes, n)
	case "Pod":
		p := &v1.Pod{}
		err = convert(p)
		into.pods = append(into.pods, p)
	}
	return err
}

func jsonType(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	default:
		return "number"
	}
}
