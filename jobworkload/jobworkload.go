// Package jobworkload answers "which Workload is this TrainJob's?", once,
// for every reader: the manager's controllers (one read through their
// cache, Of), the CLI and the metrics over a list (Index), the test
// fixtures. On a MultiKueue worker a dispatched job runs against the
// prebuilt Workload the manager created and named
// (kueue.x-k8s.io/prebuilt-workload-name); everywhere else the job
// framework names the Workload after the job's kind, name and UID. Either
// way the Workload of that name is the job's only if it is (Belongs): a
// name anyone can compute is proven by its controller's UID.
package jobworkload

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Key names job's Workload, and whether it is a prebuilt one. job is a
// TrainJob of any Go type (ours, Trainer's): its name, UID and labels are
// read.
func Key(job client.Object) (key client.ObjectKey, prebuilt bool) {
	name := jobframework.PrebuiltWorkloadNameFor(job)
	if name != "" {
		return client.ObjectKey{Namespace: job.GetNamespace(), Name: name}, true
	}
	return client.ObjectKey{Namespace: job.GetNamespace(), Name: jobframework.GetWorkloadNameForOwnerWithGVK(job.GetName(), job.GetUID(), trainjob.GVK)}, false
}

// Belongs: wl, found under Key(job), is job's: the job framework's has
// the job as its controller; a prebuilt one is the job's before the
// framework marks it so, and never another's.
func Belongs(job client.Object, wl *kueue.Workload, prebuilt bool) bool {
	owner := metav1.GetControllerOfNoCopy(wl)
	if owner == nil {
		return prebuilt
	}
	return owner.Kind == trainjob.GVK.Kind && owner.UID == job.GetUID()
}

// JobUID is the UID of the TrainJob controlling wl; false for a Workload
// of another kind, or of none.
func JobUID(wl *kueue.Workload) (types.UID, bool) {
	if owner := metav1.GetControllerOfNoCopy(wl); owner != nil && owner.Kind == trainjob.GVK.Kind {
		return owner.UID, true
	}
	return "", false
}

// JobName is the name of the TrainJob the Workload MultiKueue dispatched
// to this (worker) cluster was made for: the job framework names a job's
// Workload "trainjob-<name>-<hash>" on the manager (Key), and MultiKueue
// gives the worker's copy the same name. ok is false for a Workload
// MultiKueue did not create, or one of another kind.
func JobName(wl *kueue.Workload) (string, bool) {
	if _, dispatched := wl.Labels[kueue.MultiKueueOriginLabel]; !dispatched {
		return "", false
	}
	prefix := strings.ToLower(trainjob.GVK.Kind) + "-"
	dash := strings.LastIndex(wl.Name, "-")
	if !strings.HasPrefix(wl.Name, prefix) || dash <= len(prefix) {
		return "", false
	}
	return wl.Name[len(prefix):dash], true
}

// Of reads job's Workload through c; nil when there is none (yet), or the
// one of that name is not the job's (Belongs).
func Of(ctx context.Context, c client.Reader, job client.Object) (*kueue.Workload, error) {
	if job.GetUID() == "" {
		return nil, nil
	}
	key, prebuilt := Key(job)
	wl := &kueue.Workload{}
	if err := c.Get(ctx, key, wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Workload %s of TrainJob %s/%s: %w", key, job.GetNamespace(), job.GetName(), err)
	}
	if !Belongs(job, wl, prebuilt) {
		return nil, nil
	}
	return wl, nil
}

// Index finds many jobs' Workloads in one list of them, by Of's rule.
type Index map[client.ObjectKey]*kueue.Workload

// NewIndex indexes wls, which it keeps (no copy).
func NewIndex(wls []kueue.Workload) Index {
	x := make(Index, len(wls))
	for i := range wls {
		x[client.ObjectKeyFromObject(&wls[i])] = &wls[i]
	}
	return x
}

// Of is job's Workload in the index; nil when it has none.
func (x Index) Of(job client.Object) *kueue.Workload {
	if job.GetUID() == "" {
		return nil
	}
	key, prebuilt := Key(job)
	if wl := x[key]; wl != nil && Belongs(job, wl, prebuilt) {
		return wl
	}
	return nil
}
