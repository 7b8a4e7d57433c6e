package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
)

// A request is accepted at once, provisioned (or failed, as its
// parameters ask) once its delay has passed, and left alone afterwards.
func TestDecide(t *testing.T) {
	created := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	request := func(params map[string]autoscaling.Parameter, have ...string) *autoscaling.ProvisioningRequest {
		pr := &autoscaling.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}}
		pr.Spec.Parameters = params
		for _, c := range have {
			pr.Status.Conditions = append(pr.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue})
		}
		return pr
	}
	cases := map[string]struct {
		pr    *autoscaling.ProvisioningRequest
		after time.Duration
		want  []string
	}{
		"new: accepted":                       {pr: request(nil), after: time.Second, want: []string{autoscaling.Accepted}},
		"accepted, delay not passed":          {pr: request(nil, autoscaling.Accepted), after: 2 * time.Second},
		"accepted, delay passed: provisioned": {pr: request(nil, autoscaling.Accepted), after: 3 * time.Second, want: []string{autoscaling.Provisioned}},
		"its own delay":                       {pr: request(map[string]autoscaling.Parameter{DelayParameter: "10s"}, autoscaling.Accepted), after: 5 * time.Second},
		"no delay: both at once":              {pr: request(map[string]autoscaling.Parameter{DelayParameter: "0s"}), want: []string{autoscaling.Accepted, autoscaling.Provisioned}},
		"asked to fail":                       {pr: request(map[string]autoscaling.Parameter{OutcomeParameter: Failed}, autoscaling.Accepted), after: 3 * time.Second, want: []string{autoscaling.Failed}},
		"a delay that does not parse":         {pr: request(map[string]autoscaling.Parameter{DelayParameter: "soon"}, autoscaling.Accepted), want: []string{autoscaling.Failed}},
		"provisioned: left alone":             {pr: request(nil, autoscaling.Accepted, autoscaling.Provisioned), after: time.Hour},
		"failed: left alone":                  {pr: request(nil, autoscaling.Accepted, autoscaling.Failed), after: time.Hour},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, c := range Decide(tc.pr, created.Add(tc.after)) {
				got = append(got, c.Type)
				if c.Status != metav1.ConditionTrue || c.Reason == "" {
					t.Errorf("condition %s: status %s, reason %q", c.Type, c.Status, c.Reason)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
	bad := Decide(request(map[string]autoscaling.Parameter{DelayParameter: "soon"}, autoscaling.Accepted), created)
	if c := apimeta.FindStatusCondition(bad, autoscaling.Failed); c == nil || c.Reason != "BadParameter" {
		t.Errorf("a bad delay: %+v, want Failed with reason BadParameter", bad)
	}
}
