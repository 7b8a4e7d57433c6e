package localcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// With two replicas the webhooks are called through the Service, which
// sends each call to a ready replica; with one, at the replica itself.
func TestTwoReplicasAreCalledThroughTheService(t *testing.T) {
	ports := map[string]int{"ours-service": 1, "ours-webhook": 2, "ours-health": 3, "ours2-webhook": 4, "ours2-health": 5}
	want := []string{"-listen=127.0.0.1:1",
		"-backend=127.0.0.1:2=http://127.0.0.1:3/readyz",
		"-backend=127.0.0.1:4=http://127.0.0.1:5/readyz"}
	if diff := cmp.Diff(want, oursService{}.args(ports)); diff != "" {
		t.Errorf("Service args (-want +got):\n%s", diff)
	}
	two := Options{Settings: Settings{Integration: IntegrationOurs, OursReplicas: 2}}
	one := Options{Settings: Settings{Integration: IntegrationOurs}}
	for _, tc := range []struct {
		o          Options
		components []string
		port       string
	}{
		{one, []string{"trainjob-kueue"}, "ours-webhook"},
		{two, []string{"trainjob-kueue", "trainjob-kueue-2", "trainjob-kueue-service"}, "ours-service"},
	} {
		if diff := cmp.Diff(tc.components, ourComponents(tc.o.Settings)); diff != "" {
			t.Errorf("%d replicas: components (-want +got):\n%s", tc.o.OursReplicas, diff)
		}
		if got := ourWebhookPort(tc.o.Settings); got != tc.port {
			t.Errorf("%d replicas: webhooks called at %s, want %s", tc.o.OursReplicas, got, tc.port)
		}
		for _, l := range []launcher{ours{replica: 2}, oursService{}} {
			if got, want := l.runs(tc.o), tc.o.OursReplicas >= 2; got != want {
				t.Errorf("%d replicas: %s runs = %v", tc.o.OursReplicas, l.name(), got)
			}
		}
	}
}
