package kube

// The part of a Kubernetes batch/v1 Job that 'ratecheck kube job' writes, and nothing
// more. Kubernetes' own types (k8s.io/api) would link about 11 MB of
// Kubernetes into every binary to print some twenty fields; these carry the
// API's field names in their yaml tags instead, and testdata/kube (a
// test-only module) decodes the output strictly into k8s.io/api's Job, so a
// misspelt or misplaced field fails there. omitempty only where the field may be left out; the rest is
// always written, even when zero (backoffLimit: 0 is the point).

// Job is the manifest: an Indexed Job whose pods run the shards.
type Job struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   meta    `yaml:"metadata"`
	Spec       jobSpec `yaml:"spec"`
}

type meta struct {
	Name      string            `yaml:"name,omitempty"`
	Namespace string            `yaml:"namespace,omitempty"` // kubectl's own when absent
	Labels    map[string]string `yaml:"labels,omitempty"`
}

type jobSpec struct {
	CompletionMode        string      `yaml:"completionMode"`
	Completions           int         `yaml:"completions"`
	Parallelism           int         `yaml:"parallelism"`
	BackoffLimit          int         `yaml:"backoffLimit"`
	ActiveDeadlineSeconds int64       `yaml:"activeDeadlineSeconds"`
	Template              podTemplate `yaml:"template"`
}

type podTemplate struct {
	Metadata meta    `yaml:"metadata"`
	Spec     podSpec `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy   string      `yaml:"restartPolicy"`
	Affinity        affinity    `yaml:"affinity"`
	SecurityContext podSecurity `yaml:"securityContext"`
	Containers      []container `yaml:"containers"`
	Volumes         []volume    `yaml:"volumes,omitempty"`
}

type affinity struct {
	PodAntiAffinity antiAffinity `yaml:"podAntiAffinity"`
}

type antiAffinity struct {
	Preferred []weightedTerm `yaml:"preferredDuringSchedulingIgnoredDuringExecution"`
}

type weightedTerm struct {
	Weight int          `yaml:"weight"`
	Term   affinityTerm `yaml:"podAffinityTerm"`
}

type affinityTerm struct {
	TopologyKey   string   `yaml:"topologyKey"`
	LabelSelector selector `yaml:"labelSelector"`
}

type selector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type podSecurity struct {
	RunAsNonRoot   bool    `yaml:"runAsNonRoot"`
	RunAsUser      int64   `yaml:"runAsUser"`
	RunAsGroup     int64   `yaml:"runAsGroup"`
	SeccompProfile seccomp `yaml:"seccompProfile"`
}

type seccomp struct {
	Type string `yaml:"type"`
}

type container struct {
	Name            string            `yaml:"name"`
	Image           string            `yaml:"image"`
	Args            []string          `yaml:"args"`
	Env             []envVar          `yaml:"env"`
	Resources       resources         `yaml:"resources"`
	SecurityContext containerSecurity `yaml:"securityContext"`
	VolumeMounts    []volumeMount     `yaml:"volumeMounts,omitempty"`
}

type envVar struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

type resources struct {
	Requests resourceList `yaml:"requests"`
	Limits   resourceList `yaml:"limits"`
}

// resourceList holds quantities as the user wrote them, checked by
// positiveQuantity: Kubernetes reads the strings itself.
type resourceList struct {
	CPU    string `yaml:"cpu"`
	Memory string `yaml:"memory"`
}

type containerSecurity struct {
	AllowPrivilegeEscalation bool         `yaml:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   bool         `yaml:"readOnlyRootFilesystem"`
	Capabilities             capabilities `yaml:"capabilities"`
}

type capabilities struct {
	Drop []string `yaml:"drop"`
}

type volume struct {
	Name                  string   `yaml:"name"`
	PersistentVolumeClaim claimRef `yaml:"persistentVolumeClaim"`
}

type claimRef struct {
	ClaimName string `yaml:"claimName"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
}
