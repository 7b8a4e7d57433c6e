// Package jobworkload finds a TrainJob's Workload: the one lookup every
// reader of it uses (the job reconciler's observation, the priority boost,
// explain). On a MultiKueue worker a dispatched job runs against the
// prebuilt Workload the manager created and named
// (kueue.x-k8s.io/prebuilt-workload-name); everywhere else the job
// framework names the Workload after the job's kind, name and UID.
package jobworkload

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Key names job's Workload, and whether it is a prebuilt one.
func Key(job *trainjob.TrainJob) (key client.ObjectKey, prebuilt bool) {
	name := jobframework.PrebuiltWorkloadNameFor(job)
	if name != "" {
		return client.ObjectKey{Namespace: job.Namespace, Name: name}, true
	}
	return client.ObjectKey{Namespace: job.Namespace, Name: jobframework.GetWorkloadNameForOwnerWithGVK(job.Name, job.UID, trainjob.GVK)}, false
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
// one of that name belongs to another job: a Workload the job framework
// named has the job as its controller, a prebuilt one is the job's before
// the framework marks it so.
func Of(ctx context.Context, c client.Reader, job *trainjob.TrainJob) (*kueue.Workload, error) {
	if job.UID == "" {
		return nil, nil
	}
	key, prebuilt := Key(job)
	wl := &kueue.Workload{}
	if err := c.Get(ctx, key, wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Workload %s of TrainJob %s/%s: %w", key, job.Namespace, job.Name, err)
	}
	owner := metav1.GetControllerOfNoCopy(wl)
	if (owner == nil && !prebuilt) || (owner != nil && owner.UID != job.UID) {
		return nil, nil
	}
	return wl, nil
}
