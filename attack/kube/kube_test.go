package kube

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Check names the field at fault first, so the command puts its flag's
// dashes before it; a sound spec passes.
func TestCheckNamesTheField(t *testing.T) {
	ok := Spec{Shards: 4, StartIn: time.Minute, CPU: "2", Memory: "512Mi", Results: "stdout"}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		change func(*Spec)
		want   string
	}{
		{func(s *Spec) { s.Shards = 0 }, "shards must be ≥ 1"},
		{func(s *Spec) { s.StartIn = time.Second }, "start-in 1s is too short"},
		{func(s *Spec) { s.Name = "Bad_Name!" }, `name "Bad_Name!": a Job name must be a DNS-1123 label`},
		{func(s *Spec) { s.Name = strings.Repeat("r", 62) }, "use at most 61 for the name"},
		{func(s *Spec) { s.Namespace = "Load" }, `namespace "Load": a namespace is a DNS-1123 label`},
		{func(s *Spec) { s.CPU = "0m" }, `cpu "0m" is not a positive Kubernetes quantity`},
		{func(s *Spec) { s.Memory = "512MB" }, `memory "512MB" is not a positive Kubernetes quantity`},
		{func(s *Spec) { s.Results = "pvc:" }, `results "pvc:": use stdout or pvc:CLAIM`},
	} {
		s := ok
		c.change(&s)
		var fe *FieldError
		if err := s.Check(); err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &fe) {
			t.Errorf("%+v: %v; want %q", s, err, c.want)
		}
	}
}
