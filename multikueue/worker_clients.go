package multikueue

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// workerClientTTL: how long a worker's client is kept before its
// kubeconfig Secret is read again (a rotated credential is picked up
// within it; a client refused meanwhile is dropped at once).
const workerClientTTL = 5 * time.Minute

// WorkerClients reach MultiKueue's worker clusters from the manager, with
// the kubeconfig Secrets MultiKueue itself uses (MultiKueueCluster
// spec.clusterSource.kubeConfig, in Kueue's namespace): the manager's
// side of a dispatch reads the copy of a job's Workload there, and holds
// it when the worker refuses the job.
type WorkerClients struct {
	// reader reads MultiKueueClusters and Secrets from the manager's API
	// server, uncached: no Secret is listed or watched.
	reader    client.Reader
	scheme    *runtime.Scheme
	namespace string
	now       func() time.Time
	// connect makes a client of a kubeconfig; tests substitute it.
	connect func(kubeconfig []byte, scheme *runtime.Scheme) (client.Client, error)

	mu     sync.Mutex
	byName map[string]workerClient
}

type workerClient struct {
	client.Client
	made time.Time
}

// NewWorkerClients reaches the workers whose Secrets are in namespace.
func NewWorkerClients(reader client.Reader, scheme *runtime.Scheme, namespace string) *WorkerClients {
	return &WorkerClients{reader: reader, scheme: scheme, namespace: namespace, now: time.Now, connect: connectKubeconfig,
		byName: map[string]workerClient{}}
}

func connectKubeconfig(kubeconfig []byte, scheme *runtime.Scheme) (client.Client, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 10, 20
	cfg.Timeout = 10 * time.Second
	return client.New(cfg, client.Options{Scheme: scheme})
}

// Client is a client of worker cluster (a MultiKueueCluster's name).
func (w *WorkerClients) Client(ctx context.Context, cluster string) (client.Client, error) {
	w.mu.Lock()
	c, ok := w.byName[cluster]
	w.mu.Unlock()
	if ok && w.now().Sub(c.made) < workerClientTTL {
		return c.Client, nil
	}
	mkc := &kueue.MultiKueueCluster{}
	if err := w.reader.Get(ctx, client.ObjectKey{Name: cluster}, mkc); err != nil {
		return nil, fmt.Errorf("reading MultiKueueCluster %s: %w", cluster, err)
	}
	kc := mkc.Spec.ClusterSource.KubeConfig
	if kc == nil || kc.LocationType != kueue.SecretLocationType {
		return nil, fmt.Errorf("MultiKueueCluster %s: trainjob-kueue reads a worker's kubeconfig only from a Secret in %s (clusterSource.kubeConfig.locationType: Secret)", cluster, w.namespace)
	}
	secret := &corev1.Secret{}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: kc.Location}, secret); err != nil {
		return nil, fmt.Errorf("reading the kubeconfig Secret %s/%s of MultiKueueCluster %s: %w", w.namespace, kc.Location, cluster, err)
	}
	made, err := w.connect(secret.Data["kubeconfig"], w.scheme)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig in Secret %s/%s of MultiKueueCluster %s: %w", w.namespace, kc.Location, cluster, err)
	}
	w.mu.Lock()
	w.byName[cluster] = workerClient{Client: made, made: w.now()}
	w.mu.Unlock()
	return made, nil
}

// Forget drops cluster's client, after the worker refused it.
func (w *WorkerClients) Forget(cluster string) {
	w.mu.Lock()
	delete(w.byName, cluster)
	w.mu.Unlock()
}
