package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8s.io/utils/ptr"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
)

// The manager's client budget is its own: twice the deployed Kueue's, at
// least 100 queries per second with a burst of 200; the flags override
// it; a Kueue without client-side limits leaves ours without.
func TestTheClientBudget(t *testing.T) {
	kueues := func(qps float32, burst int32) *configapi.ClientConnection {
		return &configapi.ClientConnection{QPS: ptr.To(qps), Burst: ptr.To(burst)}
	}
	for name, tc := range map[string]struct {
		f      flags
		kueues *configapi.ClientConnection
		qps    float32
		burst  int
	}{
		"Kueue's default (50, 100)": {kueues: kueues(50, 100), qps: 100, burst: 200},
		"no clientConnection":       {qps: 100, burst: 200},
		"Kueue's raised":            {kueues: kueues(200, 300), qps: 400, burst: 600},
		"Kueue's lowered":           {kueues: kueues(20, 30), qps: 100, burst: 200},
		"Kueue's unlimited":         {kueues: kueues(-1, 100), qps: -1, burst: 200},
		"the flags":                 {f: flags{qps: 75, burst: 150}, kueues: kueues(200, 300), qps: 75, burst: 150},
	} {
		t.Run(name, func(t *testing.T) {
			qps, burst := clientBudget(tc.f, tc.kueues)
			if qps != tc.qps || burst != tc.burst {
				t.Errorf("budget %v/%d, want %v/%d", qps, burst, tc.qps, tc.burst)
			}
		})
	}
}

// The TrainJob controllers reconcile at least 50 jobs at once (ten times
// Kueue's setting for its own TrainJob controller), or the flag's number;
// the other kinds keep Kueue's.
func TestTheTrainJobConcurrency(t *testing.T) {
	kueues := &configapi.ControllerConfigurationSpec{GroupKindConcurrency: map[string]int{trainJobGroupKind: 5, "Job.batch": 5}}
	for name, tc := range map[string]struct {
		f      flags
		kueues *configapi.ControllerConfigurationSpec
		want   map[string]int
	}{
		"Kueue's default (5)": {kueues: kueues, want: map[string]int{trainJobGroupKind: 50, "Job.batch": 5}},
		"no controller part":  {want: map[string]int{trainJobGroupKind: 50}},
		"Kueue's raised":      {kueues: &configapi.ControllerConfigurationSpec{GroupKindConcurrency: map[string]int{trainJobGroupKind: 10}}, want: map[string]int{trainJobGroupKind: 100}},
		"the flag":            {f: flags{concurrency: 8}, kueues: kueues, want: map[string]int{trainJobGroupKind: 8, "Job.batch": 5}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, concurrency(tc.f, tc.kueues)); diff != "" {
				t.Errorf("concurrency (-want +got):\n%s", diff)
			}
			if tc.kueues != nil && tc.kueues.GroupKindConcurrency[trainJobGroupKind] > 10 {
				t.Error("Kueue's configuration was written to")
			}
		})
	}
}
