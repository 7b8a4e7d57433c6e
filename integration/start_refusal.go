package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/kueue/pkg/podset"
)

// A start the API server refuses is refused for one of three things, and
// each is answered differently:
//
//   - the job's own content (the API server's validation, a webhook that
//     judged what the job asks for): the same start gets the same answer,
//     so the Workload is finished and its quota goes to jobs that can run;
//   - the runtime the job names does not exist (Trainer's webhook checks it
//     on every update, even on v2.3, which would run the job from its
//     snapshot): an admin can bring it back, so the job is held like a job
//     admitted while its runtime is missing (holdForRuntime) and queues
//     again once the runtime exists;
//   - a ValidatingAdmissionPolicy: an admin's object outside the job, which
//     may be being rolled out or mended; the job is held the same way and
//     queued again after a backoff (policyhold.go).
type refusalKind int

const (
	refusedForContent refusalKind = iota
	refusedForRuntime
	refusedByPolicy
)

func (k refusalKind) String() string {
	switch k {
	case refusedForRuntime:
		return "runtime"
	case refusedByPolicy:
		return "policy"
	}
	return "content"
}

// refusalOrigin is who refused a write and what they said, read from the
// API server's Status: its reason and causes, and the fixed forms in which
// the API server names an admission webhook or policy that denied it.
type refusalOrigin struct {
	// Webhook names the admission webhook that denied the write.
	Webhook string
	// Policy and Binding name the ValidatingAdmissionPolicy that denied it.
	Policy, Binding string
	// Fields are the fields the API server's own validation names.
	Fields []string
	// Text is what the refusing party said, without the API server's
	// framing.
	Text string
}

var (
	// The API server's words for a webhook's denial
	// (k8s.io/apiserver/pkg/admission/plugin/webhook/errors).
	webhookDenial = regexp.MustCompile(`admission webhook "([^"]+)" denied the request(?:: (?s)(.*))?`)
	// and for a ValidatingAdmissionPolicy's
	// (k8s.io/apiserver/pkg/admission/plugin/policy/validating).
	policyDenial = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']+)' with binding '([^']+)' denied request: (?s)(.*)`)
)

// originOf reads who refused from the Status of err; ok is false for an
// error that is not the API server's answer.
func originOf(err error) (refusalOrigin, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return refusalOrigin{}, false
	}
	s := status.Status()
	texts := []string{s.Message}
	var o refusalOrigin
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Field != "" {
				o.Fields = append(o.Fields, c.Field)
			}
			if c.Message != "" {
				texts = append(texts, c.Message)
			}
		}
	}
	for _, t := range texts {
		if m := policyDenial.FindStringSubmatch(t); m != nil {
			o.Policy, o.Binding, o.Text = m[1], m[2], strings.TrimSpace(m[3])
			return o, true
		}
		if m := webhookDenial.FindStringSubmatch(t); m != nil {
			o.Webhook, o.Text = m[1], strings.TrimSpace(m[2])
			return o, true
		}
	}
	o.Text = s.Message
	return o, true
}

// classifyRefusal decides whose a refused start is: a policy's from the
// refusal itself; the runtime's from what is observed (runtimeMissing: a
// read of the runtime, made after the refusal, found none), whatever the
// refusal's words, so a webhook's rewording changes nothing; otherwise the
// job's.
func classifyRefusal(o refusalOrigin, runtimeMissing bool) refusalKind {
	switch {
	case runtimeMissing:
		return refusedForRuntime
	case o.Policy != "":
		return refusedByPolicy
	}
	return refusedForContent
}

// refuser names who refused, for the job's owner.
func (o refusalOrigin) refuser() string {
	switch {
	case o.Policy != "":
		return fmt.Sprintf("ValidatingAdmissionPolicy %s (binding %s)", o.Policy, o.Binding)
	case strings.HasSuffix(o.Webhook, "trainer.kubeflow.org"):
		return fmt.Sprintf("Trainer's webhook (%s)", o.Webhook)
	case o.Webhook != "":
		return fmt.Sprintf("admission webhook %s", o.Webhook)
	}
	return "the API server"
}

// said is what the refuser said, with the fields the API server named.
func (o refusalOrigin) said() string {
	text := o.Text
	var unnamed []string
	for _, f := range slices.Compact(slices.Sorted(slices.Values(o.Fields))) {
		if !strings.Contains(text, f) {
			unnamed = append(unnamed, f)
		}
	}
	switch {
	case len(unnamed) == 0:
		return text
	case text == "":
		return "fields " + strings.Join(unnamed, ", ")
	}
	return fmt.Sprintf("%s (fields %s)", text, strings.Join(unnamed, ", "))
}

// startRefused: the API server refused the start. A refusal for the job's
// content is permanent: the job framework finishes the Workload with this
// error's text and the quota goes to jobs that can run. A refusal for a
// missing runtime or by an admission policy holds the job instead
// (holdForRuntime, holdForPolicy): the error is not permanent, the
// Workload is deactivated at the end of the reconcile and queued again
// once the cause is gone. Each is said once per Workload.
func (t *TrainJob) startRefused(ctx context.Context, err error) error {
	o, _ := originOf(err)
	missing, readErr := t.runtimeMissing(ctx)
	if readErr != nil {
		// Whose the refusal is can't be told: try again later rather than
		// finish a job an admin might mend.
		return fmt.Errorf("the start was refused (%v) and the job's runtime could not be read to tell why: %w", err, readErr)
	}
	kind := classifyRefusal(o, missing != nil)
	var reason, msg string
	switch kind {
	case refusedForRuntime:
		reason = ReasonRuntimeNotFound
		msg = fmt.Sprintf("%s refused the start because %s: %s. The job is held: its Workload is deactivated and its quota released, and it is queued again once the runtime exists", o.refuser(), missing.Message, o.said())
		t.heldFor = &runtimesource.Error{Reason: ReasonRuntimeNotFound, Message: msg}
	case refusedByPolicy:
		reason = ReasonStartRefusedByPolicy
		msg = fmt.Sprintf("%s refused the start: %s. The job is held: its Workload is deactivated and its quota released, and it is queued again after a backoff (1 minute, doubling up to 15); mend the policy, or what it asks of the job", o.refuser(), o.said())
		t.heldByPolicy = o.Policy
	default:
		reason = ReasonStartRefused
		msg = fmt.Sprintf("%s refused the start: %s. The job is not started; its Workload is finished and its quota released. Fix what the message names and create the job again", o.refuser(), o.said())
	}
	t.deps.speak(&t.TrainJob, warning(reason, actionStart, msg).once(workloadUID(t.obs.reserved())))
	return &reasonError{reason: reason, msg: msg, permanent: kind == refusedForContent}
}

// runtimeMissing reads the job's runtime from the API server, not the
// cache: Trainer's webhook reads through its own cache, which may have seen
// a delete ours has not. nil when the runtime exists (or the job names one
// we don't read: its refusal is the job's).
func (t *TrainJob) runtimeMissing(ctx context.Context) (*runtimesource.Error, error) {
	_, _, err := runtimesource.ReadLive(ctx, t.deps.apiReader, &t.TrainJob)
	var rtErr *runtimesource.Error
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &rtErr):
		if rtErr.Reason == ReasonRuntimeNotFound {
			ref, _ := runtimesource.RefOf(&t.TrainJob)
			return &runtimesource.Error{Reason: ReasonRuntimeNotFound, Message: ref.String() + " named in spec.runtimeRef does not exist"}, nil
		}
		return nil, nil
	}
	return nil, err
}

// reasonError is a start refused for a reason users see as an event. Its
// text is the Workload's Finished message when it is permanent: the job
// framework finishes a Workload with the text of the start's permanent
// error, so it says the cause in its own words, without the "invalid
// admission check PodSetUpdate: conflict for" of Kueue's
// podset.BadPodSetsUpdateError, which names neither.
type reasonError struct {
	reason    string
	msg       string
	permanent bool
}

func (e *reasonError) Error() string { return e.msg }

// Is makes a permanent one what the job framework's podset.IsPermanent
// looks for.
func (e *reasonError) Is(target error) bool {
	return e.permanent && target == podset.ErrInvalidPodSetUpdate
}

// permanentRefusal is the start's permanent error with the text msg.
func permanentRefusal(reason, msg string) error {
	return &reasonError{reason: reason, msg: msg, permanent: true}
}
