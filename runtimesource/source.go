// Package runtimesource answers one question: what will Trainer run for
// this TrainJob? The runtime it names (TrainingRuntime or
// ClusterTrainingRuntime) as it is now, or, on a Trainer that snapshots
// runtimes (v2.3), the job's snapshot once taken; projected into roles and
// PodSets and memoised per job spec and runtime version. The reconciler
// and explain ask it alike, so an explanation books what the admission
// books.
//
// source.go holds all the source does with a job: the runtime it names
// (RefOf), reading that runtime (Live) or the job's snapshot of it,
// projecting the job, and what keeps it from starting (Gone). Beside it,
// the data structures it keeps: memo.go the projections, snapshot_decoder.go
// the decoded snapshots; ref.go the Ref and Error it answers with.
package runtimesource

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"golang.org/x/sync/singleflight"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Projection is a job's roles and PodSets; shared, so read-only.
type Projection struct {
	// Ref is the runtime the job names, which its messages name.
	Ref     Ref
	Roles   []podsets.Role
	PodSets []kueue.PodSet
	// Coscheduling is the runtime's podGroupPolicy.coscheduling: Trainer
	// makes the job a PodGroup.
	Coscheduling *trainer.CoschedulingPodGroupPolicySource
}

// Options configure a Source.
type Options struct {
	// Shape is the installed Trainer's API; its capabilities say whether
	// Trainer snapshots runtimes.
	Shape shape.Shape
	// PodSets tunes the PodSet projection (topology, API defaults).
	PodSets podsets.Options
	// MemoBytes bounds the memo of projections; zero means 32 MiB.
	MemoBytes int
}

// Source projects jobs from what Trainer builds them from: runtimes from
// an informer cache, snapshots from the API server (we keep no ConfigMap
// cache: a cluster's ConfigMaps are many and ours are few, and a snapshot
// never changes once taken).
type Source struct {
	cached    client.Reader
	api       client.Reader
	opts      Options
	snapshots bool
	memo      *podSetMemo
	decoder   *snapshotDecoder
	// reads makes concurrent reads of one job's snapshot one.
	reads singleflight.Group
}

// New is a Source reading runtimes through cached and snapshots through
// api.
func New(cached, api client.Reader, opts Options) *Source {
	if opts.MemoBytes == 0 {
		opts.MemoBytes = podSetMemoBytes
	}
	return &Source{
		cached: cached, api: api, opts: opts,
		snapshots: opts.Shape.Capabilities().RuntimeSnapshot,
		memo:      newPodSetMemo(opts.MemoBytes),
		decoder:   newSnapshotDecoder(snapshotsRemembered),
	}
}

// Live is the runtime job names as the cache has it now, and its version.
func (s *Source) Live(ctx context.Context, job *trainjob.TrainJob) (*trainer.TrainingRuntimeSpec, string, error) {
	return ReadLive(ctx, s.cached, job)
}

// PruneOnDelete forgets each TrainJob the informers of c see deleted.
func (s *Source) PruneOnDelete(c cache.Cache) error { return s.memo.pruneOnDelete(c) }

// Forget what is remembered of job uid: its next projection reads afresh.
func (s *Source) Forget(uid types.UID) { s.memo.forget(uid) }

// Project is what Trainer will run for job: its roles and PodSets,
// memoised per job spec and runtime version (a queued job is reconciled
// on every status change of its Workload while its PodSets change only
// with its spec or its runtime). An *Error says what the job's owner has
// to fix.
func (s *Source) Project(ctx context.Context, job *trainjob.TrainJob) (Projection, error) {
	if s.snapshots {
		// Once Trainer took its snapshot the job is built from it, and it
		// never changes: one read per job (a spec edit, our start's
		// included, is projected again from the snapshot read before).
		key := fmt.Sprintf("%s/%d/snapshot", job.UID, job.Generation)
		if p, ok := s.memo.get(key); ok {
			return p, nil
		}
		if rt := s.memo.snapshotOf(job.UID); rt != nil {
			return s.projectFromSnapshot(job, rt, key)
		}
		if s.snapshotMayExist(ctx, job) {
			got, err := s.projectFromSnapshotRead(ctx, job, key)
			if err != nil || got.taken {
				return got.Projection, err
			}
		}
	}
	rt, version, err := s.Live(ctx, job)
	if err != nil {
		return Projection{}, err
	}
	key := fmt.Sprintf("%s/%d/%s", job.UID, job.Generation, version)
	if p, ok := s.memo.get(key); ok {
		return p, nil
	}
	return s.projectFrom(job, rt, key)
}

// Gone is what keeps a job Trainer runs from its snapshot from starting:
// the runtime it names no longer exists, and Trainer's webhook refuses
// every update of such a job, the start's too. nil when the runtime exists,
// and on a Trainer that takes no snapshots (there the projection itself
// reads the runtime). One read from the informer cache, no request.
func (s *Source) Gone(ctx context.Context, job *trainjob.TrainJob) (*Error, error) {
	if !s.snapshots {
		return nil, nil
	}
	_, _, err := s.Live(ctx, job)
	switch {
	case err == nil:
		return nil, nil
	case IsNotFound(err):
		ref, _ := RefOf(job)
		return &Error{Reason: ReasonRuntimeNotFound, Message: fmt.Sprintf(
			"%s named in spec.runtimeRef does not exist. Trainer runs this job from its snapshot of the runtime, but Trainer's webhook refuses to start a job whose runtime is missing: the job is held (if admitted, its Workload is deactivated and its quota released) and queued again once the runtime exists. Create it again, or recreate the job with an existing runtime", ref)}, nil
	case errors.As(err, new(*Error)):
		// Another fault of the reference: the projection says it.
		return nil, nil
	}
	return nil, err
}

// snapshotProjected is a projection from the job's snapshot; taken is false
// while Trainer has taken none.
type snapshotProjected struct {
	Projection
	taken bool
}

// projectFromSnapshotRead reads the job's snapshot and projects it, once
// for all callers at a time: two controllers observe a job at once (the job
// framework's reconcile and the gang keeper, woken by the same
// status write of Trainer's), and each read the snapshot (47 reads for 24
// jobs started together, in the smoke's audit log).
func (s *Source) projectFromSnapshotRead(ctx context.Context, job *trainjob.TrainJob, key string) (snapshotProjected, error) {
	v, err, _ := s.reads.Do(key, func() (any, error) {
		// A call that just ended projected it.
		if p, ok := s.memo.get(key); ok {
			return snapshotProjected{Projection: p, taken: true}, nil
		}
		rt, found, err := readSnapshot(ctx, s.api, s.decoder, job)
		if err != nil || !found {
			return snapshotProjected{}, err
		}
		p, err := s.projectFromSnapshot(job, rt, key)
		return snapshotProjected{Projection: p, taken: true}, err
	})
	got, _ := v.(snapshotProjected)
	return got, err
}

// projectFromSnapshot projects the job from its snapshot rt, and remembers
// rt with the job.
func (s *Source) projectFromSnapshot(job *trainjob.TrainJob, rt *trainer.TrainingRuntimeSpec, key string) (Projection, error) {
	p, err := s.projectFrom(job, rt, key)
	if err == nil {
		s.memo.rememberSnapshot(job.UID, rt)
	}
	return p, err
}

// snapshotMayExist: the job's snapshot is worth a read. Trainer v2.3 takes
// it before the status write of its first reconcile, so until Trainer has
// written the job's status there is none, or one just taken from the live
// runtime: the reconciles of a burst's queued jobs were a read each for
// nothing, and the status write that follows the snapshot reconciles the
// job again. Unless the runtime changed meanwhile: a job projected before
// from another version of it is read for at once, so an edit racing
// Trainer's status write never books the edited runtime. A spec edit is no
// such reason: our start often comes before Trainer's first reconcile.
func (s *Source) snapshotMayExist(ctx context.Context, job *trainjob.TrainJob) bool {
	if len(job.Status.Conditions) > 0 || len(job.Status.JobsStatus) > 0 {
		return true
	}
	_, version, err := s.Live(ctx, job)
	if err != nil {
		// The snapshot read and the live one that follows it tell.
		return true
	}
	return s.memo.projectedFromOther(job.UID, version)
}

// projectFrom computes the job's projection from runtime rt and memoises it
// under key.
func (s *Source) projectFrom(job *trainjob.TrainJob, rt *trainer.TrainingRuntimeSpec, key string) (Projection, error) {
	ref, _ := RefOf(job) // checked by the read of rt, or by Trainer's webhook
	roles, err := podsets.Roles(job, rt, s.opts.Shape)
	if err != nil {
		return Projection{}, &Error{
			Reason:  ReasonInvalidRuntime,
			Message: fmt.Sprintf("cannot compute the pods of this TrainJob: %v", err),
		}
	}
	podSets, err := podsets.FromRoles(roles, s.opts.PodSets)
	if err != nil {
		// Pure and deterministic: only an edit of the job or its runtime,
		// both watched, can change the answer.
		return Projection{}, &Error{
			Reason:  ReasonInvalidRuntime,
			Message: fmt.Sprintf("cannot compute the PodSets of this TrainJob: %v", err),
		}
	}
	p := Projection{Ref: ref, Roles: roles, PodSets: podSets}
	if rt.PodGroupPolicy != nil && rt.PodGroupPolicy.Coscheduling != nil {
		p.Coscheduling = rt.PodGroupPolicy.Coscheduling.DeepCopy()
	}
	s.memo.put(key, p)
	return p, nil
}

// Read is the runtime Trainer builds job from, read through c with no
// memo (explain, with its caller's identity): on a Trainer that snapshots
// runtimes (rules.RuntimeSnapshot), the job's snapshot once Trainer took
// it, the live runtime before; the live runtime on earlier releases. A
// reader who may not read ConfigMaps gets the live runtime, and snapshotted
// false.
func Read(ctx context.Context, c client.Reader, job *trainjob.TrainJob, rules podsets.Rules) (spec *trainer.TrainingRuntimeSpec, snapshotted bool, err error) {
	if rules.RuntimeSnapshot && job.UID != "" {
		rt, found, err := readSnapshot(ctx, c, nil, job)
		switch {
		case err == nil && found:
			return rt, true, nil
		case err != nil && !apierrors.IsForbidden(err):
			return nil, false, err
		}
	}
	rt, _, err := ReadLive(ctx, c, job)
	return rt, false, err
}

// RefOf is the runtime job names; an *Error when it names a kind Trainer
// has no runtime of.
func RefOf(job *trainjob.TrainJob) (Ref, error) {
	group := ptr.Deref(job.Spec.RuntimeRef.APIGroup, trainer.GroupVersion.Group)
	kind := ptr.Deref(job.Spec.RuntimeRef.Kind, kindClusterTrainingRuntime)
	if group != trainer.GroupVersion.Group || (kind != kindTrainingRuntime && kind != kindClusterTrainingRuntime) {
		return Ref{}, &Error{
			Reason: ReasonUnsupportedRuntime,
			Message: fmt.Sprintf("spec.runtimeRef names %s.%s: only %s and %s of group %s are supported",
				kind, group, kindTrainingRuntime, kindClusterTrainingRuntime, trainer.GroupVersion.Group),
		}
	}
	ref := Ref{Kind: kind, Name: job.Spec.RuntimeRef.Name}
	if kind == kindTrainingRuntime {
		ref.Namespace = job.Namespace
	}
	return ref, nil
}

// ReadLive reads the runtime job names as it is now, through c, and names its
// version: its reference and resourceVersion. A runtime that does not exist
// is an *Error of ReasonRuntimeNotFound.
func ReadLive(ctx context.Context, c client.Reader, job *trainjob.TrainJob) (spec *trainer.TrainingRuntimeSpec, version string, err error) {
	ref, err := RefOf(job)
	if err != nil {
		return nil, "", err
	}
	var rv string
	if ref.Kind == kindTrainingRuntime {
		var rt trainer.TrainingRuntime
		err = c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &rt)
		spec, rv = &rt.Spec, rt.ResourceVersion
	} else {
		var rt trainer.ClusterTrainingRuntime
		err = c.Get(ctx, client.ObjectKey{Name: ref.Name}, &rt)
		spec, rv = &rt.Spec, rt.ResourceVersion
	}
	if apierrors.IsNotFound(err) {
		return nil, "", &Error{
			Reason:  ReasonRuntimeNotFound,
			Message: fmt.Sprintf("%s named in spec.runtimeRef does not exist: create it (the job stays queued and proceeds once it exists) or point spec.runtimeRef at an existing runtime", ref),
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", ref, err)
	}
	return spec, ref.String() + "@" + rv, nil
}

// Trainer v2.3's runtime snapshot (pkg/runtime/core/snapshot.go): at a
// job's first reconcile it copies the runtime, as YAML under one key, into
// a ConfigMap the job controls, and builds the job from that copy ever
// after. A runtime edited while the job queues changes nothing about the
// pods, so neither may it change the quota booked for them.
const (
	snapshotSuffix = "-runtime-snapshot"
	snapshotKey    = "runtime"
)

// readSnapshot reads the job's runtime snapshot from the API server (we keep
// no ConfigMap cache: a cluster's ConfigMaps are many and ours are few, and
// a snapshot never changes once taken, so its projection is memoised).
// found is false while Trainer has not taken one yet.
func readSnapshot(ctx context.Context, r client.Reader, dec *snapshotDecoder, job *trainjob.TrainJob) (spec *trainer.TrainingRuntimeSpec, found bool, err error) {
	cm := &corev1.ConfigMap{}
	err = r.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: job.Name + snapshotSuffix}, cm)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the runtime snapshot of TrainJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	spec, err = decodeSnapshot(cm, job, dec)
	if err != nil {
		return nil, false, err
	}
	return spec, true, nil
}

// decodeSnapshot checks the snapshot the way Trainer does before it uses
// one, so a snapshot Trainer would refuse is refused here too, and returns
// the runtime's spec, shared with dec's other readers: read-only. A nil dec
// decodes afresh.
func decodeSnapshot(cm *corev1.ConfigMap, job *trainjob.TrainJob, dec *snapshotDecoder) (*trainer.TrainingRuntimeSpec, error) {
	invalid := func(format string, a ...any) error {
		return &Error{
			Reason: ReasonInvalidRuntime,
			Message: fmt.Sprintf("the runtime snapshot ConfigMap %s, which Trainer builds this job from, "+format+
				"; Trainer will not run the job either: delete the ConfigMap so Trainer takes a new snapshot of the runtime", append([]any{cm.Name}, a...)...),
		}
	}
	if owner := metav1.GetControllerOfNoCopy(cm); owner == nil || owner.UID != job.UID {
		return nil, invalid("is not controlled by this TrainJob")
	}
	data, ok := cm.Data[snapshotKey]
	if !ok {
		return nil, invalid("has no %q key", snapshotKey)
	}
	rt, err := dec.decode(data)
	if err != nil {
		return nil, invalid("does not hold a runtime: %v", err)
	}
	if rt.Name != job.Spec.RuntimeRef.Name {
		return nil, invalid("holds runtime %q, but spec.runtimeRef names %q", rt.Name, job.Spec.RuntimeRef.Name)
	}
	if kind := job.Spec.RuntimeRef.Kind; kind != nil && rt.Kind != "" && rt.Kind != *kind {
		return nil, invalid("holds a %s, but spec.runtimeRef names a %s", rt.Kind, *kind)
	}
	return &rt.Spec, nil
}
