// Package kube checks ratecheck's Kubernetes manifest as Kubernetes reads
// it: strictly decoded into k8s.io/api's batch/v1 Job with kubectl's YAML
// (sigs.k8s.io/yaml), and each --cpu/--memory held to resource.Quantity.
// It is a module of its own, for tests only, so that Kubernetes' modules
// (some 60 packages, two minutes of a cold compile per build mode) never
// enter the product's go.mod, its binary or its race-detector build.
package kube
