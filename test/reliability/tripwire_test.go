package reliability_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// tripwire stops the manager at an exact step of an admission: a
// validating webhook of the test's own, called for the manager's TrainJob
// writes only, that SIGKILLs the manager when the armed write arrives and
// then refuses that write. The manager dies with the write in flight and
// never learns its answer; the API server keeps the job as it was before
// the write — the state a crash just before it leaves. Unarmed, or when
// the test is not serving, it lets everything through (failurePolicy
// Ignore).
type tripwire struct {
	mu      sync.Mutex
	step    string
	when    func(old, new *unstructured.Unstructured) bool
	tripped chan string
}

var (
	wireOnce sync.Once
	wire     *tripwire
	wireErr  error
)

// theTripwire serves and registers the tripwire once per test binary.
func theTripwire(t *testing.T) *tripwire {
	t.Helper()
	wireOnce.Do(func() { wire, wireErr = startTripwire() })
	if wireErr != nil {
		t.Fatalf("tripwire: %v", wireErr)
	}
	return wire
}

func startTripwire() (*tripwire, error) {
	ca, err := localcluster.NewCA("reliability-tripwire")
	if err != nil {
		return nil, err
	}
	kp, err := ca.Serving("tripwire")
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(kp.Cert, kp.Key)
	if err != nil {
		return nil, err
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	w := &tripwire{tripped: make(chan string, 1)}
	go func() { _ = http.Serve(l, w) }()
	url := fmt.Sprintf("https://%s/trip", l.Addr().(*net.TCPAddr).String())
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "reliability-tripwire"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "tripwire.reliability.trainjob-kueue.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca.CertPEM},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			TimeoutSeconds:          ptr.To[int32](20),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"trainer.kubeflow.org"}, APIVersions: []string{"*"}, Resources: []string{"trainjobs"}},
			}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "manager", Expression: fmt.Sprintf("request.userInfo.username == %q", ourUser)}},
		}},
	}
	_ = k8s.Delete(ctx, cfg.DeepCopy())
	if err := k8s.Create(ctx, cfg); err != nil {
		return nil, fmt.Errorf("registering the tripwire: %w", err)
	}
	return w, nil
}

// arm makes the next manager write for which when holds (old and new: the
// job before and after it) kill the manager and be refused.
func (w *tripwire) arm(step string, when func(old, new *unstructured.Unstructured) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.step, w.when = step, when
	select {
	case <-w.tripped:
	default:
	}
}

func (w *tripwire) disarm() { w.arm("", nil) }

// wait returns once the armed write came and the manager is dead.
func (w *tripwire) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case step := <-w.tripped:
		t.Logf("tripwire: manager killed at %q", step)
	case <-time.After(timeout):
		w.disarm()
		t.Fatalf("tripwire: the manager made no write %q within %v", w.step, timeout)
	}
}

func (w *tripwire) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	review := &admissionv1.AdmissionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
		http.Error(rw, fmt.Sprintf("decoding the review: %v", err), http.StatusBadRequest)
		return
	}
	req := review.Request
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	old, cur := &unstructured.Unstructured{}, &unstructured.Unstructured{}
	_ = json.Unmarshal(req.OldObject.Raw, &old.Object)
	_ = json.Unmarshal(req.Object.Raw, &cur.Object)
	w.mu.Lock()
	if w.when != nil && w.when(old, cur) {
		step := w.step
		w.step, w.when = "", nil
		// Dead before the API server hears the answer: whatever the
		// manager meant to do after this write, it does not.
		if err := cluster.Crash("trainjob-kueue"); err != nil {
			step += fmt.Sprintf(" (kill failed: %v)", err)
		}
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: "tripwire: the manager was killed at " + step}
		w.tripped <- step
	}
	w.mu.Unlock()
	review.Response = resp
	review.Request = nil
	_ = json.NewEncoder(rw).Encode(review)
}

// Steps of an admission the tripwire can stop at, for job name.
func startsJob(name string) func(old, new *unstructured.Unstructured) bool {
	return func(old, cur *unstructured.Unstructured) bool {
		return cur.GetName() == name && isSuspended(old) && !isSuspended(cur)
	}
}

func injectsInto(name string) func(old, new *unstructured.Unstructured) bool {
	return func(old, cur *unstructured.Unstructured) bool {
		_, before := entries(old)
		_, after := entries(cur)
		return cur.GetName() == name && len(before) == 0 && len(after) > 0
	}
}

func stopsJob(name string) func(old, new *unstructured.Unstructured) bool {
	return func(old, cur *unstructured.Unstructured) bool {
		return cur.GetName() == name && !isSuspended(old) && isSuspended(cur)
	}
}

func isSuspended(obj *unstructured.Unstructured) bool {
	s, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend")
	return s
}
