package cmd

// The part of a Kubernetes batch/v1 Job that 'kube job' writes, and nothing
// more. Kubernetes' own types (k8s.io/api) would link about 11 MB of
// Kubernetes into every binary to print some twenty fields; these carry the
// API's field names in their yaml tags instead, and kube_test.go decodes the
// output strictly into k8s.io/api's Job, so a misspelt or misplaced field
// fails there. omitempty only where the field may be left out; the rest is
// always written, even when zero (backoffLimit: 0 is the point).

type kubeJob struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	Metadata   kubeMeta    `yaml:"metadata"`
	Spec       kubeJobSpec `yaml:"spec"`
}

type kubeMeta struct {
	Name      string            `yaml:"name,omitempty"`
	Namespace string            `yaml:"namespace,omitempty"` // kubectl's own when absent
	Labels    map[string]string `yaml:"labels,omitempty"`
}

type kubeJobSpec struct {
	CompletionMode        string          `yaml:"completionMode"`
	Completions           int             `yaml:"completions"`
	Parallelism           int             `yaml:"parallelism"`
	BackoffLimit          int             `yaml:"backoffLimit"`
	ActiveDeadlineSeconds int64           `yaml:"activeDeadlineSeconds"`
	Template              kubePodTemplate `yaml:"template"`
}

type kubePodTemplate struct {
	Metadata kubeMeta    `yaml:"metadata"`
	Spec     kubePodSpec `yaml:"spec"`
}

type kubePodSpec struct {
	RestartPolicy   string          `yaml:"restartPolicy"`
	Affinity        kubeAffinity    `yaml:"affinity"`
	SecurityContext kubePodSecurity `yaml:"securityContext"`
	Containers      []kubeContainer `yaml:"containers"`
	Volumes         []kubeVolume    `yaml:"volumes,omitempty"`
}

type kubeAffinity struct {
	PodAntiAffinity kubeAntiAffinity `yaml:"podAntiAffinity"`
}

type kubeAntiAffinity struct {
	Preferred []kubeWeightedTerm `yaml:"preferredDuringSchedulingIgnoredDuringExecution"`
}

type kubeWeightedTerm struct {
	Weight int              `yaml:"weight"`
	Term   kubeAffinityTerm `yaml:"podAffinityTerm"`
}

type kubeAffinityTerm struct {
	TopologyKey   string       `yaml:"topologyKey"`
	LabelSelector kubeSelector `yaml:"labelSelector"`
}

type kubeSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type kubePodSecurity struct {
	RunAsNonRoot   bool        `yaml:"runAsNonRoot"`
	RunAsUser      int64       `yaml:"runAsUser"`
	RunAsGroup     int64       `yaml:"runAsGroup"`
	SeccompProfile kubeSeccomp `yaml:"seccompProfile"`
}

type kubeSeccomp struct {
	Type string `yaml:"type"`
}

type kubeContainer struct {
	Name            string                `yaml:"name"`
	Image           string                `yaml:"image"`
	Args            []string              `yaml:"args"`
	Env             []kubeEnvVar          `yaml:"env"`
	Resources       kubeResources         `yaml:"resources"`
	SecurityContext kubeContainerSecurity `yaml:"securityContext"`
	VolumeMounts    []kubeVolumeMount     `yaml:"volumeMounts,omitempty"`
}

type kubeEnvVar struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

type kubeResources struct {
	Requests kubeResourceList `yaml:"requests"`
	Limits   kubeResourceList `yaml:"limits"`
}

// kubeResourceList holds quantities as the user wrote them, checked by
// kubeQuantity: Kubernetes reads the strings itself.
type kubeResourceList struct {
	CPU    string `yaml:"cpu"`
	Memory string `yaml:"memory"`
}

type kubeContainerSecurity struct {
	AllowPrivilegeEscalation bool             `yaml:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   bool             `yaml:"readOnlyRootFilesystem"`
	Capabilities             kubeCapabilities `yaml:"capabilities"`
}

type kubeCapabilities struct {
	Drop []string `yaml:"drop"`
}

type kubeVolume struct {
	Name                  string       `yaml:"name"`
	PersistentVolumeClaim kubeClaimRef `yaml:"persistentVolumeClaim"`
}

type kubeClaimRef struct {
	ClaimName string `yaml:"claimName"`
}

type kubeVolumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
}
