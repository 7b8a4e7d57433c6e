package discovery

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSettingsOf(t *testing.T) {
	cases := map[string]struct {
		body    string
		wantErr string
		check   func(*testing.T, KueueSettings)
	}{
		"the configuration we ship": {
			body: func() string {
				b, err := os.ReadFile("../config/kueue/controller_manager_config.yaml")
				if err != nil {
					t.Fatal(err)
				}
				// Drop the header: writeConfig adds it.
				return strings.SplitN(string(b), "kind: Configuration\n", 2)[1]
			}(),
			check: func(t *testing.T, o KueueSettings) {
				if o.ManageJobsWithoutQueueName {
					t.Error("manageJobsWithoutQueueName should be false")
				}
				if !o.MultiKueue {
					t.Error("MultiKueue should dispatch TrainJobs with the configuration we ship")
				}
			},
		},
		"in-tree TrainJob integration enabled": {
			body: "integrations:\n  frameworks: [\"batch/job\", \"trainer.kubeflow.org/trainjob\"]\n",
			check: func(t *testing.T, o KueueSettings) {
				if !o.BuiltInTrainJob {
					t.Error("Kueue's built-in TrainJob integration is on: the manager must stand by")
				}
			},
		},
		"TrainJob listed as an external framework": {
			body:    "integrations:\n  frameworks: [\"batch/job\"]\n  externalFrameworks: [\"TrainJob.v1alpha1.trainer.kubeflow.org\"]\n",
			wantErr: "externalFrameworks",
		},
		"manageJobsWithoutQueueName with Kueue's JobSet integration": {
			body:    "manageJobsWithoutQueueName: true\nintegrations:\n  frameworks: [\"jobset.x-k8s.io/jobset\"]\n",
			wantErr: `"jobset.x-k8s.io/jobset" integration on`,
		},
		"manageJobsWithoutQueueName with Kueue's Job integration (JobSet's off)": {
			body:    "manageJobsWithoutQueueName: true\nintegrations:\n  frameworks: [\"batch/job\", \"pod\"]\n",
			wantErr: `"batch/job" integration on`,
		},
		"manageJobsWithoutQueueName with neither": {
			body: "manageJobsWithoutQueueName: true\nmanagedJobsNamespaceSelector:\n  matchLabels: {team: ml}\nwaitForPodsReady:\n  timeout: 5m\nintegrations:\n  frameworks: [\"pod\", \"kubeflow.org/mpijob\"]\n  labelKeysToCopy: [\"team\"]\n",
			check: func(t *testing.T, o KueueSettings) {
				if !o.ManageJobsWithoutQueueName || !o.WaitForPodsReady {
					t.Errorf("settings not taken over: %+v", o)
				}
				if !o.ManagedJobsNamespaceSelector.Matches(labels.Set{"team": "ml"}) || o.ManagedJobsNamespaceSelector.Matches(labels.Set{}) {
					t.Errorf("namespace selector %v", o.ManagedJobsNamespaceSelector)
				}
				if len(o.LabelKeysToCopy) != 1 || o.LabelKeysToCopy[0] != "team" {
					t.Errorf("labelKeysToCopy %v", o.LabelKeysToCopy)
				}
				if o.MultiKueue {
					t.Error("MultiKueue dispatches TrainJobs only when multiKueue.externalFrameworks lists TrainJob")
				}
			},
		},
		"Kueue's default LocalQueue": {
			body: "manageJobsWithoutQueueName: false\n",
			check: func(t *testing.T, o KueueSettings) {
				if !o.LocalQueueDefaulting {
					t.Error("LocalQueueDefaulting is GA since Kueue v0.17: on unless a configuration turns it off")
				}
			},
		},
		"a Kueue v0.16 configuration turning the default LocalQueue off": {
			body: "featureGates:\n  LocalQueueDefaulting: false\n",
			check: func(t *testing.T, o KueueSettings) {
				if o.LocalQueueDefaulting {
					t.Error("the retired gate's false is honoured")
				}
			},
		},
		"MultiKueue dispatching other kinds only": {
			body: "multiKueue:\n  externalFrameworks:\n  - name: RayJob.v1.ray.io\n",
			check: func(t *testing.T, o KueueSettings) {
				if o.MultiKueue {
					t.Error("TrainJob is not listed in multiKueue.externalFrameworks")
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := LoadKueueConfig(writeConfig(t, tc.body))
			if err != nil {
				t.Fatal(err)
			}
			// As the manager does: Kueue's gates first, as its
			// configuration sets them.
			if err := ApplyFeatureGates(&cfg, ""); err != nil {
				t.Fatal(err)
			}
			opts, err := SettingsOf(&cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, opts)
		})
	}
}

func TestLoadKueueConfigRejectsUnknownFields(t *testing.T) {
	if _, err := LoadKueueConfig(writeConfig(t, "manageJobsWithoutQueueNme: true\n")); err == nil {
		t.Fatal("a misspelt field must not be ignored")
	}
}

// Kueue v0.19 waits for pods by default; v0.16 only with the section.
func TestWaitForPodsReadyDefaultsPerKueueRelease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		release KueueRelease
		want    bool
	}{
		{"v0.19, no section", "manageJobsWithoutQueueName: false\n", KueueRelease{PodsReadyByDefault: true}, true},
		{"v0.16, no section", "manageJobsWithoutQueueName: false\n", KueueRelease{}, false},
		{"v0.16, with the section", "waitForPodsReady:\n  timeout: 5m\n", KueueRelease{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := LoadKueueConfigFor(writeConfig(t, tc.body), tc.release)
			if err != nil {
				t.Fatal(err)
			}
			opts, err := SettingsOf(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			if opts.WaitForPodsReady != tc.want {
				t.Errorf("WaitForPodsReady = %v, want %v", opts.WaitForPodsReady, tc.want)
			}
		})
	}
}

func TestRetiredFeatureGatesAreHonouredNotSet(t *testing.T) {
	known, retired := SplitFeatureGates(map[string]bool{"LocalQueueDefaulting": false, "TopologyAwareScheduling": true})
	if diff := cmp.Diff(map[string]bool{"TopologyAwareScheduling": true}, known); diff != "" {
		t.Errorf("gates to set (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"LocalQueueDefaulting": false}, retired); diff != "" {
		t.Errorf("retired gates (-want +got):\n%s", diff)
	}
}

func TestApplyFeatureGatesRefusesWhatKueueDoesNotKnow(t *testing.T) {
	// The command line first: a refused map leaves the process's gates
	// refusing every later call.
	defaults, err := LoadKueueConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if err := ApplyFeatureGates(&defaults, "NoSuchGate=true"); err == nil || !strings.Contains(err.Error(), "--feature-gates") {
		t.Errorf("an unknown gate on the command line: %v, want a refusal naming --feature-gates", err)
	}
	cfg, err := LoadKueueConfig(writeConfig(t, "featureGates:\n  NoSuchGate: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ApplyFeatureGates(&cfg, ""); err == nil || !strings.Contains(err.Error(), "feature gates of the Kueue configuration") {
		t.Errorf("an unknown gate: %v, want a refusal naming the configuration's gates", err)
	}
}

func TestJobSetIntegration(t *testing.T) {
	for body, want := range map[string]bool{
		"integrations:\n  frameworks: [\"batch/job\", \"jobset.x-k8s.io/jobset\"]\n": true,
		"integrations:\n  frameworks: [\"batch/job\"]\n":                             false,
	} {
		cfg, err := LoadKueueConfig(writeConfig(t, body))
		if err != nil {
			t.Fatal(err)
		}
		if got := JobSetIntegration(&cfg); got != want {
			t.Errorf("%q: JobSetIntegration = %v, want %v", body, got, want)
		}
	}
}

// Where MultiKueue keeps its worker kubeconfigs and how it marks what it
// creates: Kueue's defaults, or what its Configuration says.
func TestKueueNamespaceAndMultiKueueOrigin(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg               configapi.Configuration
		namespace, origin string
	}{
		"Kueue's defaults": {namespace: "kueue-system", origin: "multikueue"},
		"configured": {cfg: configapi.Configuration{Namespace: ptr.To("batch"), MultiKueue: &configapi.MultiKueue{Origin: ptr.To("mk-east")}},
			namespace: "batch", origin: "mk-east"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := SettingsOf(&tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got.KueueNamespace != tc.namespace || got.MultiKueueOrigin != tc.origin {
				t.Errorf("namespace %q, origin %q; want %q, %q", got.KueueNamespace, got.MultiKueueOrigin, tc.namespace, tc.origin)
			}
		})
	}
}
