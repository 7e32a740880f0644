package cmd

import (
	"fmt"
	"strconv"
	"strings"
)

// kubeLabelMax is the longest DNS-1123 label (RFC 1123 §2.1), Kubernetes'
// limit for a namespace, a label value and a pod's hostname.
const kubeLabelMax = 63

// isDNSLabel reports whether s is a DNS-1123 label: lowercase letters,
// digits and '-', starting and ending with a letter or digit, at most 63.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > kubeLabelMax || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, b := range []byte(s) {
		if (b < 'a' || b > 'z') && (b < '0' || b > '9') && b != '-' {
			return false
		}
	}
	return true
}

// checkJobName refuses a --name that Kubernetes would refuse for the Job or,
// later and out of sight, for its pods: the Job controller sets each pod's
// hostname to NAME-INDEX, itself a DNS label, so the name leaves room for
// the last pod's "-INDEX".
func checkJobName(name string, shards int) error {
	if !isDNSLabel(name) {
		return usageErr("--name %q: a Job name must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most %d characters (e.g. ratecheck-gateway)", name, kubeLabelMax)
	}
	lastHost := fmt.Sprintf("%s-%d", name, shards-1)
	if len(lastHost) > kubeLabelMax {
		return usageErr("--name %q is too long for %d shards: Kubernetes names the last pod's host %s-%d, and a hostname has at most %d characters: use at most %d for the name",
			name, shards, name, shards-1, kubeLabelMax, kubeLabelMax-(len(lastHost)-len(name)))
	}
	return nil
}

// kubeSuffixes are the suffixes of a Kubernetes quantity, decimal (n u m
// k M G T P E, and none) and binary (Ki … Ei), as resource.ParseQuantity
// in k8s.io/apimachinery reads them.
var kubeSuffixes = map[string]bool{
	"n": true, "u": true, "m": true, "": true, "k": true, "M": true, "G": true, "T": true, "P": true, "E": true,
	"Ki": true, "Mi": true, "Gi": true, "Ti": true, "Pi": true, "Ei": true,
}

// kubePositiveQuantity reports whether s is a Kubernetes resource quantity
// above zero: an optional sign, a decimal number (digits, '.', digits) and a
// suffix or an exponent (e or E and a signed integer). Kubernetes itself
// reads the manifest's string; this only refuses, before anything is
// printed, what it would refuse or what would give a pod nothing.
// kube_test.go checks it against resource.ParseQuantity.
func kubePositiveQuantity(s string) bool {
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
	return !negative && !zero && strings.Count(number, ".") <= 1 && (kubeSuffixes[suffix] || isKubeExponent(suffix))
}

// isKubeExponent reports whether suffix is e or E followed by a signed
// integer, as in 1e3 or 5E-1.
func isKubeExponent(suffix string) bool {
	if len(suffix) < 2 || (suffix[0] != 'e' && suffix[0] != 'E') {
		return false
	}
	_, err := strconv.ParseInt(suffix[1:], 10, 64)
	return err == nil
}
