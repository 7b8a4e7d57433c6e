package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A job whose start an admission policy refused is held out of the queue
// and queued again after a backoff that doubles with each refusal; the
// mark goes once the job runs.
func TestAJobRefusedByAPolicyIsHeldAndRetriedWithBackoff(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	mark := func(attempt int, ago time.Duration) string {
		v, _ := json.Marshal(names.PolicyHold{Policy: "require-team", Since: now.Add(-ago), Attempt: attempt})
		return string(v)
	}
	cases := map[string]struct {
		active      bool
		running     bool
		refusedBy   string
		mark        string
		writes      int
		wantActive  bool
		wantAttempt int // 0: no mark
		wantWait    time.Duration
		event       string
	}{
		"refused: held, retried in a minute": {active: true, refusedBy: "require-team", writes: 1, wantAttempt: 1, wantWait: time.Minute},
		"refused again after two retries: four minutes": {
			active: true, refusedBy: "require-team", mark: mark(2, 10*time.Minute), writes: 1, wantAttempt: 3, wantWait: 4 * time.Minute,
		},
		"held, not yet due: no write, back when due": {mark: mark(1, 20*time.Second), wantAttempt: 1, wantWait: 40 * time.Second},
		"held and due: queued again, the count kept": {
			mark: mark(1, 2*time.Minute), writes: 1, wantActive: true, wantAttempt: 1, event: ReasonPolicyRetry,
		},
		"the backoff stops growing at 15 minutes": {mark: mark(9, 14*time.Minute), wantAttempt: 9, wantWait: time.Minute},
		"started since: the mark goes":            {active: true, running: true, mark: mark(3, time.Hour), writes: 1, wantActive: true},
		"never refused: nothing":                  {active: true, wantActive: true},
		"deactivated by someone else: left so":    {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl", Annotations: map[string]string{}}}
			wl.Spec.Active = ptr.To(tc.active)
			if tc.mark != "" {
				wl.Annotations[names.HeldByPolicyAnnotation] = tc.mark
			}
			c, read, writes := storedWorkload(t, wl)
			rec := events.NewFakeRecorder(4)
			job := trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"}}
			job.Spec.Suspend = ptr.To(!tc.running)
			adapter := &TrainJob{TrainJob: job, deps: &deps{client: c, recorder: rec}, obs: &observed{workload: read}, heldByPolicy: tc.refusedBy}
			wait, err := adapter.holdForPolicy(t.Context(), now)
			if err != nil {
				t.Fatal(err)
			}
			if *writes != tc.writes {
				t.Errorf("%d writes, want %d", *writes, tc.writes)
			}
			if wait != tc.wantWait {
				t.Errorf("back in %v, want %v", wait, tc.wantWait)
			}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(wl), read); err != nil {
				t.Fatal(err)
			}
			if got := ptr.Deref(read.Spec.Active, true); got != tc.wantActive {
				t.Errorf("active %v, want %v", got, tc.wantActive)
			}
			h, ok := names.PolicyHoldOf(read.Annotations)
			if got := map[bool]int{true: h.Attempt}[ok]; got != tc.wantAttempt {
				t.Errorf("attempt %d, want %d (mark %q)", got, tc.wantAttempt, read.Annotations[names.HeldByPolicyAnnotation])
			}
			got := drain(rec)
			if tc.event == "" && len(got) > 0 || tc.event != "" && (len(got) != 1 || !strings.Contains(got[0], tc.event)) {
				t.Errorf("events %q, want %q", got, tc.event)
			}
		})
	}
}
