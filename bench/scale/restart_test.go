package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

const (
	trainerUser = "system:serviceaccount:kubeflow-system:kubeflow-trainer-controller-manager"
	kueueUser   = "system:serviceaccount:kueue-system:kueue-controller-manager"
)

func auditEvent(at int, user, verb, resource, sub, name string, code int) localcluster.AuditEvent {
	e := localcluster.AuditEvent{
		Stage:    "ResponseComplete",
		Received: time.Unix(1000+int64(at), 0),
		Verb:     verb,
		ObjectRef: &struct {
			Resource, Namespace, Name, Subresource string
		}{Resource: resource, Namespace: "scale", Name: name, Subresource: sub},
		ResponseStatus: &struct{ Code int }{Code: code},
	}
	e.User.Username = user
	return e
}

func TestRestartWritesAreTheRestartsOwnUnlessAChangeToTheJobCameFirst(t *testing.T) {
	workloads := map[string]string{"trainjob-a-1": "a", "trainjob-b-1": "b", "trainjob-c-1": "c"}
	jobOf := func(w string) string { return workloads[w] }
	cases := map[string]struct {
		events []localcluster.AuditEvent
		want   promptedWrites
	}{
		"nothing written": {
			events: []localcluster.AuditEvent{
				auditEvent(1, loadharness.OurUser, "list", "trainjobs", "", "", 200),
				auditEvent(2, trainerUser, "patch", "trainjobs", "status", "a", 200),
			},
			want: promptedWrites{Prompts: map[string]int{}},
		},
		"a write after Trainer's status write to the same job answers it": {
			events: []localcluster.AuditEvent{
				auditEvent(1, trainerUser, "patch", "trainjobs", "status", "a", 200),
				auditEvent(2, loadharness.OurUser, "patch", "workloads", "status", "trainjob-a-1", 200),
			},
			want: promptedWrites{Answering: 1, Prompts: map[string]int{"patch trainjobs/status by " + trainerUser: 1}},
		},
		"the last change before ours is the prompt": {
			events: []localcluster.AuditEvent{
				auditEvent(1, trainerUser, "patch", "trainjobs", "status", "a", 200),
				auditEvent(2, kueueUser, "update", "workloads", "status", "trainjob-a-1", 200),
				auditEvent(3, loadharness.OurUser, "patch", "workloads", "status", "trainjob-a-1", 200),
			},
			want: promptedWrites{Answering: 1, Prompts: map[string]int{"update workloads/status by " + kueueUser: 1}},
		},
		"a change to another job prompts nothing": {
			events: []localcluster.AuditEvent{
				auditEvent(1, trainerUser, "patch", "trainjobs", "status", "b", 200),
				auditEvent(2, loadharness.OurUser, "patch", "workloads", "status", "trainjob-a-1", 200),
			},
			want: promptedWrites{Unprompted: 1, Prompts: map[string]int{}, Examples: []string{"patch workloads/status trainjob-a-1"}},
		},
		"a change after ours prompts nothing, even if the log lists it first": {
			events: []localcluster.AuditEvent{
				auditEvent(3, trainerUser, "patch", "jobsets", "status", "a", 200),
				auditEvent(2, loadharness.OurUser, "patch", "trainjobs", "", "a", 200),
			},
			want: promptedWrites{Unprompted: 1, Prompts: map[string]int{}, Examples: []string{"patch trainjobs a"}},
		},
		"a refused write is no change, nor a write of ours": {
			events: []localcluster.AuditEvent{
				auditEvent(1, trainerUser, "patch", "trainjobs", "status", "a", 409),
				auditEvent(2, loadharness.OurUser, "patch", "workloads", "status", "trainjob-a-1", 200),
				auditEvent(3, loadharness.OurUser, "patch", "workloads", "status", "trainjob-b-1", 422),
			},
			want: promptedWrites{Unprompted: 1, Prompts: map[string]int{}, Examples: []string{"patch workloads/status trainjob-a-1"}},
		},
		"leases and events are not writes": {
			events: []localcluster.AuditEvent{
				auditEvent(1, loadharness.OurUser, "update", "leases", "", "trainjob-kueue", 200),
				auditEvent(2, loadharness.OurUser, "create", "events", "", "a.123", 201),
			},
			want: promptedWrites{Prompts: map[string]int{}},
		},
		"a JobSet's change prompts its TrainJob's": {
			events: []localcluster.AuditEvent{
				auditEvent(1, "system:serviceaccount:jobset-system:jobset-controller-manager", "update", "jobsets", "status", "c", 200),
				auditEvent(2, loadharness.OurUser, "patch", "trainjobs", "", "c", 200),
				auditEvent(3, loadharness.OurUser, "update", "workloads", "", "trainjob-c-1", 200),
			},
			want: promptedWrites{Answering: 2, Prompts: map[string]int{"update jobsets/status by system:serviceaccount:jobset-system:jobset-controller-manager": 2}},
		},
		"a Workload not the load's is unprompted": {
			events: []localcluster.AuditEvent{
				auditEvent(1, kueueUser, "update", "workloads", "status", "other", 200),
				auditEvent(2, loadharness.OurUser, "update", "workloads", "", "other", 200),
			},
			want: promptedWrites{Unprompted: 1, Prompts: map[string]int{}, Examples: []string{"update workloads other"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := classifyWrites(tc.events, loadharness.OurUser, jobOf)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("classifyWrites (-want +got):\n%s", diff)
			}
		})
	}
}
