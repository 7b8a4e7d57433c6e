package shape

import "github.com/trainjob-kueue/trainjob-kueue/podsets"

// Capabilities are what the installed Trainer release lets trainjob-kueue
// do, as one value: callers ask it instead of telling shapes apart by type.
type Capabilities struct {
	// Field is the override field, as users know it.
	Field string
	// PodMetadata: an override entry carries pod labels and annotations
	// (v2.1+). Without them neither Kueue's topology ungater (podset label,
	// workload annotation) nor coscheduling (PodGroup label) reaches the
	// pods.
	PodMetadata bool
	// SharedEntries: a replicatedJob may be targeted by one entry only, so
	// an admission is merged into the user's entry, which may target other
	// roles too (v2.0).
	SharedEntries bool
	// Start is how many requests an admission takes to start a job.
	Start StartMode
	// Rules are how the release turns a TrainJob into pods (counting,
	// resourcesPerNode, jobsStatus, runtime snapshot).
	podsets.Rules
}

// StartMode is how an admission's entries and spec.suspend=false reach a
// TrainJob.
type StartMode int

const (
	// TwoRequests: Trainer takes override changes only on a job that stays
	// suspended, so the entries go first and the unsuspend after (v2.0,
	// v2.1).
	TwoRequests StartMode = iota
	// OneRequestUnlessRefused: Trainer v2.2.1+ takes both in one request;
	// v2.2.0, whose CRD is the same, refuses that. A start refused in one
	// request and then taken in two tells them apart, whatever the
	// refusal's words.
	OneRequestUnlessRefused
)

// Capabilities of the release that serves spec.podSpecOverrides (v2.0).
func (s PodSpecOverrides) Capabilities() Capabilities {
	return Capabilities{Field: s.Name(), SharedEntries: true, Start: TwoRequests, Rules: s.Rules()}
}

// Capabilities of the release that serves spec.podTemplateOverrides (v2.1).
func (s PodTemplateOverrides) Capabilities() Capabilities {
	return Capabilities{Field: s.Name(), PodMetadata: true, Start: TwoRequests, Rules: s.Rules()}
}

// Capabilities of the releases that serve spec.runtimePatches (v2.2+).
func (s RuntimePatches) Capabilities() Capabilities {
	start := TwoRequests
	if s.UnsuspendsInOnePatch {
		start = OneRequestUnlessRefused
	}
	return Capabilities{Field: s.Name(), PodMetadata: true, Start: start, Rules: s.Rules()}
}
