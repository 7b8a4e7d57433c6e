package gang

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// WorkloadAPIWriter is the one writer of a job's PodGroups in mode
// workload-api: it makes them (at the start, and again while their
// admission runs) and deletes those of admissions that ended. integration
// decides when; what a write is, and what stands under a name, is here.
type WorkloadAPIWriter struct {
	// Client writes, and lists the groups from the manager's cache.
	Client client.Client
	// Live reads what stands under a group's name when the create finds
	// one: the cache may not hold it yet.
	Live client.Reader
	// Count, when set, is told of each group made or deleted (ActionCreated,
	// ActionDeleted).
	Count func(action string)
}

// ClaimError is a group found under the name of one we make that is not
// ours as this admission plans it (ClaimOf): never used, never changed by
// us.
type ClaimError struct {
	Claim Claim
	Why   string
}

func (e *ClaimError) Error() string { return e.Why }

// Create makes want (WorkloadAPIGroup's object), then proves what stands
// under its name ours: made when it created it; false and no error when
// the job's own group, as planned, was there already (an earlier try of
// the same start); a *ClaimError when another's, or the job's in another
// form, is there. Its name can be computed by others, so it is never taken
// on trust. Any other error is the API server's answer to the create, or
// to the read of what stands under the name.
func (w WorkloadAPIWriter) Create(ctx context.Context, want *unstructured.Unstructured) (made bool, err error) {
	err = w.Client.Create(ctx, want.DeepCopy(), client.FieldOwner(names.FieldManager))
	if err == nil {
		w.count(ActionCreated)
		return true, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return false, err
	}
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(WorkloadAPIGroupGVK)
	if err := w.Live.Get(ctx, client.ObjectKeyFromObject(want), existing); err != nil {
		return false, fmt.Errorf("reading PodGroup %s/%s, found under its name at create: %w", want.GetNamespace(), want.GetName(), err)
	}
	if claim, why := ClaimOf(existing, want); claim != ClaimOurs {
		return false, &ClaimError{Claim: claim, Why: why}
	}
	return false, nil
}

// Release deletes the job's groups made for an admission other than
// current ("" when the job holds none, or finished): its pods are gone or
// going, and the API server keeps a group until no pod names it, so a
// re-admission gets groups of new names. It returns the groups it keeps,
// read from the cache (a job without groups costs no request). Each is
// deleted on the condition of its UID: a group made again under the name
// meanwhile is not touched.
func (w WorkloadAPIWriter) Release(ctx context.Context, job *trainjob.TrainJob, current string) ([]metav1.PartialObjectMetadata, error) {
	// The first list starts the cache's watch of the groups: bounded, so
	// a watch that can't sync (a role without the permission) is an error
	// retried with backoff, not a worker held for ever.
	listCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	groups := &metav1.PartialObjectMetadataList{}
	groups.SetGroupVersionKind(WorkloadAPIGroupGVK.GroupVersion().WithKind("PodGroupList"))
	if err := w.Client.List(listCtx, groups, client.InNamespace(job.Namespace), client.MatchingLabels{names.PodGroupJobLabel: job.Name}); err != nil {
		return nil, fmt.Errorf("listing the PodGroups (scheduling.k8s.io/v1beta1) of TrainJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	var kept []metav1.PartialObjectMetadata
	for i := range groups.Items {
		pg := &groups.Items[i]
		if !Ended(pg, job.UID, current) {
			kept = append(kept, *pg)
			continue
		}
		if err := w.Client.Delete(ctx, pg, client.Preconditions{UID: &pg.UID}); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("deleting PodGroup %s/%s of an admission that ended: %w", job.Namespace, pg.Name, err)
		}
		w.count(ActionDeleted)
	}
	return kept, nil
}

func (w WorkloadAPIWriter) count(action string) {
	if w.Count != nil {
		w.Count(action)
	}
}
