package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

func TestSplitStarts(t *testing.T) {
	at := func(ms int) time.Time {
		return time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	}
	event := func(user, verb, resource, sub, name, uri string, code, received, took int) localcluster.AuditEvent {
		e := localcluster.AuditEvent{Stage: "ResponseComplete", Verb: verb, RequestURI: uri, Received: at(received), Completed: at(received + took)}
		e.User.Username = user
		e.ObjectRef = &struct{ Resource, Namespace, Name, Subresource string }{Resource: resource, Namespace: "bench", Name: name, Subresource: sub}
		e.ResponseStatus = &struct{ Code int }{Code: code}
		return e
	}
	admission := func(wl string, received int) localcluster.AuditEvent {
		return event(kueueUser, "patch", "workloads", "status", wl, "/apis/kueue.x-k8s.io/v1beta2/namespaces/bench/workloads/"+wl+"/status?fieldManager=kueue-admission&force=true", 200, received, 5)
	}
	start := func(user, job string, code, received, took int) localcluster.AuditEvent {
		return event(user, "patch", "trainjobs", "", job, "/apis/trainer.kubeflow.org/v1alpha1/namespaces/bench/trainjobs/"+job, code, received, took)
	}
	events := []localcluster.AuditEvent{
		// job-1: Kueue said why it waits (at 0), admitted it at 1,000
		// (answered at 1,005); the start arrived 35 ms later and took 60 ms.
		admission("trainjob-job-1-a1b2c", 0),
		admission("trainjob-job-1-a1b2c", 1000),
		start(loadharness.OurUser, "job-1", 200, 1040, 60),
		start(loadharness.OurUser, "job-1", 200, 5000, 10), // a later write: not the start
		// job-2: a write before its admission is no start, nor is a
		// refused one, nor another process's, nor one of a status.
		start(loadharness.OurUser, "job-2", 200, 100, 10),
		admission("trainjob-job-2-0f0f0", 2000),
		start(loadharness.OurUser, "job-2", 422, 2010, 5),
		start(kueueUser, "job-2", 200, 2015, 5),
		event(loadharness.OurUser, "patch", "trainjobs", "status", "job-2", "", 200, 2016, 5),
		start(loadharness.OurUser, "job-2", 200, 2020, 200),
		// job-3, never admitted: no start.
		start(loadharness.OurUser, "job-3", 200, 3000, 10),
		// A Workload of another kind's naming is no TrainJob's.
		admission("jobset-job-3-12345", 2900),
	}
	got := splitStarts(events, loadharness.OurUser)
	want := startSplit{
		toStart: []time.Duration{35 * time.Millisecond, 15 * time.Millisecond},
		start:   []time.Duration{60 * time.Millisecond, 200 * time.Millisecond},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(startSplit{})); diff != "" {
		t.Errorf("splitStarts (-want +got):\n%s", diff)
	}
}

func TestTrainJobOf(t *testing.T) {
	for wl, want := range map[string]string{
		"trainjob-job-00223-9501a": "job-00223",
		"trainjob-a-12345":         "a",
		"jobset-job-1-12345":       "",
		"trainjob-12345":           "",
	} {
		if got, _ := trainJobOf(wl); got != want {
			t.Errorf("trainJobOf(%q) = %q, want %q", wl, got, want)
		}
	}
}
