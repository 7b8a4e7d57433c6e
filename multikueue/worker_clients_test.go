package multikueue

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// A worker's client is made from the kubeconfig Secret its
// MultiKueueCluster names, in Kueue's namespace; kept for a while, made
// again after workerClientTTL or when forgotten; a kubeconfig kept
// anywhere but a Secret is refused, saying where it must be.
func TestWorkerClientsComeFromMultiKueuesSecrets(t *testing.T) {
	cluster := func(name string, kc *kueue.KubeConfig) *kueue.MultiKueueCluster {
		return &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.MultiKueueClusterSpec{ClusterSource: kueue.ClusterSource{KubeConfig: kc}}}
	}
	reader := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		cluster("w1", &kueue.KubeConfig{Location: "w1-kubeconfig", LocationType: kueue.SecretLocationType}),
		cluster("on-disk", &kueue.KubeConfig{Location: "/etc/w.kubeconfig", LocationType: kueue.PathLocationType}),
		cluster("no-secret", &kueue.KubeConfig{Location: "gone", LocationType: kueue.SecretLocationType}),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: "w1-kubeconfig"}, Data: map[string][]byte{"kubeconfig": []byte("w1's")}},
	).Build()
	w := NewWorkerClients(reader, scheme.New(), "kueue-system")
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	w.now = func() time.Time { return now }
	var made []string
	w.connect = func(kubeconfig []byte, _ *runtime.Scheme) (client.Client, error) {
		made = append(made, string(kubeconfig))
		return fake.NewClientBuilder().Build(), nil
	}
	for range 2 {
		if _, err := w.Client(t.Context(), "w1"); err != nil {
			t.Fatal(err)
		}
	}
	if len(made) != 1 || made[0] != "w1's" {
		t.Errorf("clients made %q, want one from w1's Secret", made)
	}
	now = now.Add(workerClientTTL)
	if _, err := w.Client(t.Context(), "w1"); err != nil || len(made) != 2 {
		t.Errorf("after the TTL: %d clients made (%v), want the Secret read again", len(made), err)
	}
	w.Forget("w1")
	if _, err := w.Client(t.Context(), "w1"); err != nil || len(made) != 3 {
		t.Errorf("forgotten: %d clients made (%v), want a new one", len(made), err)
	}
	for name, want := range map[string]string{
		"on-disk":   "only from a Secret in kueue-system",
		"no-secret": "reading the kubeconfig Secret kueue-system/gone",
		"unknown":   "reading MultiKueueCluster unknown",
	} {
		if _, err := w.Client(t.Context(), name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it to say %q", name, err, want)
		}
	}
	w.connect = func([]byte, *runtime.Scheme) (client.Client, error) { return nil, errors.New("no server") }
	w.Forget("w1")
	if _, err := w.Client(t.Context(), "w1"); err == nil || !strings.Contains(err.Error(), "the kubeconfig in Secret kueue-system/w1-kubeconfig") {
		t.Errorf("a kubeconfig that makes no client: %v", err)
	}
}
