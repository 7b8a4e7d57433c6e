package names

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPolicyHoldOf(t *testing.T) {
	since := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		annotations map[string]string
		want        PolicyHold
		ok          bool
	}{
		"no mark":           {},
		"a mark":            {annotations: map[string]string{HeldByPolicyAnnotation: `{"policy":"no-gpus","since":"2026-11-27T10:00:00Z","attempt":2}`}, want: PolicyHold{Policy: "no-gpus", Since: since, Attempt: 2}, ok: true},
		"a mark not JSON":   {annotations: map[string]string{HeldByPolicyAnnotation: `no-gpus`}},
		"another mark only": {annotations: map[string]string{HeldForRuntimeAnnotation: "TrainingRuntime ns/torch"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := PolicyHoldOf(tc.annotations)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
