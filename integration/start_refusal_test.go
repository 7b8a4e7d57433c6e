package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The refusals the API server really sends when a start is refused,
// recorded on live clusters by hack/refusals, one set per Trainer release:
// <release>-<case>.json.
func recordedRefusals(t *testing.T) map[string]error {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "refusals", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]error{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s metav1.Status
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = &apierrors.StatusError{ErrStatus: s}
	}
	return out
}

// Every Trainer release's refusals are classified by who refused and by
// what is observed, not by their words: a runtime refusal with the runtime
// there is the job's, and so is a refusal by the API server's validation.
func TestRefusalsRecordedFromEachTrainerAreClassified(t *testing.T) {
	recorded := recordedRefusals(t)
	for _, release := range []string{"trainer-v2.1.0", "trainer-v2.2.0", "trainer-v2.3.0"} {
		for _, c := range []string{"trainingruntime-missing", "clustertrainingruntime-missing", "immutable-field", "policy"} {
			if _, ok := recorded[release+"-"+c]; !ok {
				t.Errorf("no recorded refusal %s-%s (hack/refusals records them)", release, c)
			}
		}
	}
	for name, err := range recorded {
		t.Run(name, func(t *testing.T) {
			o, ok := originOf(err)
			if !ok {
				t.Fatalf("not the API server's answer: %v", err)
			}
			missing := strings.HasSuffix(name, "runtime-missing")
			var want refusalKind
			var refuser string
			switch {
			case missing:
				want, refuser = refusedForRuntime, "Trainer's webhook (validator.trainjob.trainer.kubeflow.org)"
				if !strings.Contains(strings.ToLower(o.said()), "spec.runtimeref") {
					t.Errorf("what Trainer said, %q, lost the field", o.said())
				}
			case strings.HasSuffix(name, "policy"):
				want, refuser = refusedByPolicy, "ValidatingAdmissionPolicy "
				if !strings.Contains(o.said(), "TrainJobs in this namespace may not start") {
					t.Errorf("what the policy said, %q, lost its message", o.said())
				}
			default:
				want, refuser = refusedForContent, "the API server"
				if !strings.Contains(o.said(), "spec.runtimeRef") {
					t.Errorf("what the API server said, %q, lost the field", o.said())
				}
			}
			if got := classifyRefusal(o, missing); got != want {
				t.Errorf("classified %v, want %v (origin %+v)", got, want, o)
			}
			if !strings.HasPrefix(o.refuser(), refuser) {
				t.Errorf("refuser %q, want %q…", o.refuser(), refuser)
			}
			if strings.Contains(o.said(), "denied the request") || strings.Contains(o.said(), "denied request") {
				t.Errorf("what was said, %q, keeps the API server's framing", o.said())
			}
			// The words alone decide nothing: the same refusal with the
			// runtime there is the job's (or the policy's).
			if missing {
				if got := classifyRefusal(o, false); got != refusedForContent {
					t.Errorf("with the runtime there: %v, want %v", got, refusedForContent)
				}
			}
		})
	}
}

func TestOriginOfReadsWhoRefused(t *testing.T) {
	cases := map[string]struct {
		status metav1.Status
		want   refusalOrigin
	}{
		"a webhook": {
			status: metav1.Status{Reason: metav1.StatusReasonForbidden, Code: 403, Message: `admission webhook "v.example.com" denied the request: no`},
			want:   refusalOrigin{Webhook: "v.example.com", Text: "no"},
		},
		"a webhook that says nothing": {
			status: metav1.Status{Reason: metav1.StatusReasonForbidden, Code: 403, Message: `admission webhook "v.example.com" denied the request without explanation`},
			want:   refusalOrigin{Webhook: "v.example.com", Text: ""},
		},
		"a policy, in a cause": {
			status: metav1.Status{Reason: metav1.StatusReasonInvalid, Code: 422, Message: "x is invalid",
				Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Message: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: not now"}}}},
			want: refusalOrigin{Policy: "p", Binding: "b", Text: "not now"},
		},
		"validation, with fields": {
			status: metav1.Status{Reason: metav1.StatusReasonInvalid, Code: 422, Message: "TrainJob x is invalid: spec.a: Invalid value",
				Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Field: "spec.a"}, {Field: "spec.b"}}}},
			want: refusalOrigin{Fields: []string{"spec.a", "spec.b"}, Text: "TrainJob x is invalid: spec.a: Invalid value"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := originOf(&apierrors.StatusError{ErrStatus: tc.status})
			if !ok {
				t.Fatal("not read")
			}
			if got.Webhook != tc.want.Webhook || got.Policy != tc.want.Policy || got.Binding != tc.want.Binding || got.Text != tc.want.Text || !slices.Equal(got.Fields, tc.want.Fields) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, ok := originOf(os.ErrNotExist); ok {
		t.Error("an error that is not the API server's read as a refusal")
	}
	// Fields the text names are not named twice.
	o := refusalOrigin{Fields: []string{"spec.a", "spec.b"}, Text: "spec.a: bad"}
	if got, want := o.said(), "spec.a: bad (fields spec.b)"; got != want {
		t.Errorf("said %q, want %q", got, want)
	}
}
