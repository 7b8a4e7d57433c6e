package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A running job's Workload API PodGroups are kept while its admission
// lives. The start makes them once; a group deleted since (by a user who
// may edit PodGroups, a cleanup script) would leave every later pod of
// the job — a failed index's replacement, a JobSet restart's pods —
// refused by our pod webhook ("not found"), and the job holding its quota
// without progress until Kueue's waitForPodsReady evicts it, or for ever
// where that is off. So a group of the running admission that is gone is
// made again, under its name (its pods' label), said as a Normal event.
// One being deleted is left to go: the API server keeps it while a pod
// names it, and it is made again once it is gone (a JobSet restart frees
// it with its pods).

// keepWorkloadAPIGroups makes again each group of the job's running
// admission that is gone: groups are the job's groups the cache holds.
func (t *TrainJob) keepWorkloadAPIGroups(ctx context.Context, groups []metav1.PartialObjectMetadata) error {
	wl := t.obs.reserved()
	if t.Suspended() || wl == nil || !workload.IsAdmitted(wl) || t.obs.runner != trainjob.RunLocally {
		return nil
	}
	have := make(map[string]bool, len(groups))
	for i := range groups {
		have[groups[i].Name] = true
	}
	named, err := labelValuesOf(&t.TrainJob)
	if err != nil {
		return err
	}
	var missing []string
	for _, n := range named {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := t.readClusterQueue(ctx, wl); err != nil {
		return err
	}
	plans, err := t.gangPlans(ctx)
	if err != nil {
		return fmt.Errorf("planning the PodGroups of the running job again, to make %s again: %w", strings.Join(missing, ", "), err)
	}
	for _, p := range plans {
		if !p.WorkloadAPI || !slices.Contains(missing, p.Name) {
			continue
		}
		made, err := t.createWorkloadAPIGroup(ctx, p)
		if err != nil {
			var pgErr *podGroupError
			if errors.As(err, &pgErr) {
				t.deps.speak(&t.TrainJob, warning(gang.ReasonPodGroupNotWritten, actionGang, pgErr.Error()).once(wl.UID))
			}
			return err
		}
		if !made {
			// There all along: the cache had not seen it yet.
			continue
		}
		t.deps.speak(&t.TrainJob, normal(gang.ReasonPodGroupRemade, actionGang, fmt.Sprintf(
			"PodGroup %s/%s of the running admission (roles %s) was gone: made again, so the job's later pods can join their gang", t.Namespace, p.Name, strings.Join(p.Roles, ","))))
	}
	return nil
}

// readClusterQueue reads the ClusterQueue that admitted the job, for its
// gang setting (observe reads it only for a job about to start).
func (t *TrainJob) readClusterQueue(ctx context.Context, wl *kueue.Workload) error {
	if t.obs.clusterQueue != nil || wl.Status.Admission == nil {
		return nil
	}
	cq := &kueue.ClusterQueue{}
	err := t.deps.client.Get(ctx, client.ObjectKey{Name: string(wl.Status.Admission.ClusterQueue)}, cq)
	switch {
	case err == nil:
		t.obs.clusterQueue = cq
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading ClusterQueue %s, which admitted the job: %w", wl.Status.Admission.ClusterQueue, err)
	}
	return nil
}

// labelValuesOf are the PodGroups the job's override entries put its pods
// in (names.PodGroupLabel), whatever Trainer's shape of the entries: the
// start injected them there, so they are what its pods name.
func labelValuesOf(job *trainjob.TrainJob) ([]string, error) {
	data, err := json.Marshal(job.Spec)
	if err != nil {
		return nil, fmt.Errorf("reading the job's entries: %w", err)
	}
	var out []string
	key := []byte(`"` + names.PodGroupLabel + `":"`)
	for {
		i := bytes.Index(data, key)
		if i < 0 {
			return out, nil
		}
		data = data[i+len(key):]
		end := bytes.IndexByte(data, '"')
		if end < 0 {
			return out, nil
		}
		if v := string(data[:end]); !slices.Contains(out, v) {
			out = append(out, v)
		}
		data = data[end:]
	}
}
