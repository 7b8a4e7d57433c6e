package trainjob

import (
	"testing"

	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestRunnerOf(t *testing.T) {
	for name, tc := range map[string]struct {
		managedBy *string
		want      Runner
	}{
		"unset: Trainer's":        {nil, RunLocally},
		"Trainer's default":       {ptr.To(TrainerControllerName), RunLocally},
		"MultiKueue":              {ptr.To(kueue.MultiKueueControllerName), RunRemotely},
		"another controller":      {ptr.To("example.com/my-operator"), RunElsewhere},
		"empty string is a value": {ptr.To(""), RunElsewhere},
	} {
		t.Run(name, func(t *testing.T) {
			if got := RunnerOf(tc.managedBy); got != tc.want {
				t.Errorf("RunnerOf = %v, want %v", got, tc.want)
			}
		})
	}
}
