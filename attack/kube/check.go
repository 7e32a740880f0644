package kube

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// labelMax is the longest DNS-1123 label (RFC 1123 §2.1), Kubernetes'
// limit for a namespace, a label value and a pod's hostname.
const labelMax = 63

// minStartIn is the shortest common start that leaves pods time to be
// scheduled.
const minStartIn = 5 * time.Second

// FieldError is a Spec field Kubernetes would refuse when the manifest is
// applied (or, for the pods, only later). Its message reads as the
// field's flag without its dashes: "cpu \"lots\" is not ...".
type FieldError struct {
	Field   string // the Spec field as 'kube job' spells its flag: "cpu"
	Problem string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Problem }

func refuse(field, format string, a ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, a...)}
}

// Check refuses, before anything is printed, what Kubernetes would refuse
// of the Job or its pods, or what would give a pod nothing.
func (s Spec) Check() error {
	switch {
	case s.Shards < 1:
		return refuse("shards", "must be ≥ 1 (the number of pods)")
	case s.StartIn < minStartIn:
		return refuse("start-in", "%s is too short for pods to be scheduled: give at least 5s (60s is typical)", s.StartIn)
	}
	if s.Name != "" {
		if err := checkJobName(s.Name, s.Shards); err != nil {
			return err
		}
	}
	if s.Namespace != "" && !isDNSLabel(s.Namespace) {
		return refuse("namespace", "%q: a namespace is a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most %d characters", s.Namespace, labelMax)
	}
	if !positiveQuantity(s.CPU) {
		return refuse("cpu", "%q is not a positive Kubernetes quantity: give cores or millicores above zero (e.g. 2 or 1500m)", s.CPU)
	}
	if !positiveQuantity(s.Memory) {
		return refuse("memory", "%q is not a positive Kubernetes quantity: give bytes above zero with a suffix such as Mi or Gi (e.g. 512Mi or 2Gi)", s.Memory)
	}
	if claim, ok := strings.CutPrefix(s.Results, "pvc:"); s.Results != "stdout" && (!ok || claim == "") {
		return refuse("results", "%q: use stdout or pvc:CLAIM", s.Results)
	}
	return nil
}

// isDNSLabel reports whether s is a DNS-1123 label: lowercase letters,
// digits and '-', starting and ending with a letter or digit, at most 63.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > labelMax || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, b := range []byte(s) {
		if (b < 'a' || b > 'z') && (b < '0' || b > '9') && b != '-' {
			return false
		}
	}
	return true
}

// checkJobName refuses a name that Kubernetes would refuse for the Job or,
// later and out of sight, for its pods: the Job controller sets each pod's
// hostname to NAME-INDEX, itself a DNS label, so the name leaves room for
// the last pod's "-INDEX".
func checkJobName(name string, shards int) error {
	if !isDNSLabel(name) {
		return refuse("name", "%q: a Job name must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most %d characters (e.g. ratecheck-gateway)", name, labelMax)
	}
	lastHost := fmt.Sprintf("%s-%d", name, shards-1)
	if len(lastHost) > labelMax {
		return refuse("name", "%q is too long for %d shards: Kubernetes names the last pod's host %s-%d, and a hostname has at most %d characters: use at most %d for the name",
			name, shards, name, shards-1, labelMax, labelMax-(len(lastHost)-len(name)))
	}
	return nil
}

// quantitySuffixes are the suffixes of a Kubernetes quantity, decimal (n u
// m k M G T P E, and none) and binary (Ki … Ei), as resource.ParseQuantity
// in k8s.io/apimachinery reads them.
var quantitySuffixes = map[string]bool{
	"n": true, "u": true, "m": true, "": true, "k": true, "M": true, "G": true, "T": true, "P": true, "E": true,
	"Ki": true, "Mi": true, "Gi": true, "Ti": true, "Pi": true, "Ei": true,
}

// positiveQuantity reports whether s is a Kubernetes resource quantity
// above zero: an optional sign, a decimal number (digits, '.', digits) and a
// suffix or an exponent (e or E and a signed integer). Kubernetes itself
// reads the manifest's string; this only refuses, before anything is
// printed, what it would refuse or what would give a pod nothing.
// check_test.go checks it against resource.ParseQuantity.
func positiveQuantity(s string) bool {
	negative := strings.HasPrefix(s, "-")
	if negative || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	end := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(s)
	}
	number, suffix := s[:end], s[end:]
	zero := strings.Trim(number, "0.") == "" // no digit but zeros, or none at all
	return !negative && !zero && strings.Count(number, ".") <= 1 && (quantitySuffixes[suffix] || isExponent(suffix))
}

// isExponent reports whether suffix is e or E followed by a signed
// integer, as in 1e3 or 5E-1.
func isExponent(suffix string) bool {
	if len(suffix) < 2 || (suffix[0] != 'e' && suffix[0] != 'E') {
		return false
	}
	_, err := strconv.ParseInt(suffix[1:], 10, 64)
	return err == nil
}
