package kube

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// DecodeJob strictly decodes a manifest into the batch/v1 Job type: a field
// the schema does not have is an error.
func DecodeJob(t testing.TB, manifest string) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(manifest), &job); err != nil {
		t.Fatalf("the manifest is not a batch/v1 Job: %v\n%s", err, manifest)
	}
	return &job
}
