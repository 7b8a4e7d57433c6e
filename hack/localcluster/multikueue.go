package localcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// MultiKueueCheck is the AdmissionCheck ConnectWorkers creates on the
// manager: ClusterQueues that list it dispatch to the workers.
const MultiKueueCheck = "multikueue"

// Client is an admin client of the cluster.
func (c *Cluster) Client(scheme *runtime.Scheme) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// UnthrottledClient is an admin client of the cluster without client-go's
// default limit of 5 requests a second: a benchmark that looks every few
// ms would otherwise measure the limit (each look is a request or two).
func (c *Cluster) UnthrottledClient(scheme *runtime.Scheme) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	return client.New(cfg, client.Options{Scheme: scheme})
}

// ConnectWorkers makes manager dispatch to workers (by name) the way a
// batch admin does: a kubeconfig Secret per worker in Kueue's namespace, a
// MultiKueueCluster each, one MultiKueueConfig listing them, and the
// MultiKueue AdmissionCheck. It waits until the check is active, that is
// until Kueue on the manager reached every worker. Running it again is
// harmless.
func ConnectWorkers(ctx context.Context, manager *Cluster, workers map[string]*Cluster) error {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kueue.AddToScheme(scheme))
	utilruntime.Must(rbacv1.AddToScheme(scheme))
	c, err := manager.Client(scheme)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(workers))
	for name := range workers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		// The worker's admin kubeconfig embeds its certificates, as Kueue
		// requires of kubeconfigs in Secrets. In production, give the
		// manager an identity with the RBAC Kueue's MultiKueue
		// documentation lists instead.
		kubeconfig, err := os.ReadFile(workers[name].Kubeconfig)
		if err != nil {
			return err
		}
		objs := []client.Object{
			&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: kueueNamespace, Name: name + "-kubeconfig"},
				Data:       map[string][]byte{"kubeconfig": kubeconfig},
			},
			&kueue.MultiKueueCluster{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: kueue.MultiKueueClusterSpec{ClusterSource: kueue.ClusterSource{
					KubeConfig: &kueue.KubeConfig{Location: name + "-kubeconfig", LocationType: kueue.SecretLocationType},
				}},
			},
		}
		for _, o := range objs {
			if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
			}
		}
	}
	if err := grantKubeconfigSecrets(ctx, c, names); err != nil {
		return err
	}
	if err := createCheck(ctx, c, names); err != nil {
		return err
	}
	return poll.UntilDone(ctx, 90*time.Second, func() error {
		for _, name := range names {
			mkc := &kueue.MultiKueueCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, mkc); err != nil {
				return err
			}
			if !apimeta.IsStatusConditionTrue(mkc.Status.Conditions, kueue.MultiKueueClusterActive) {
				return fmt.Errorf("MultiKueueCluster %s not active: %v", name, mkc.Status.Conditions)
			}
		}
		ac := &kueue.AdmissionCheck{}
		if err := c.Get(ctx, client.ObjectKey{Name: MultiKueueCheck}, ac); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(ac.Status.Conditions, kueue.AdmissionCheckActive) {
			return fmt.Errorf("AdmissionCheck %s not active: %v", MultiKueueCheck, ac.Status.Conditions)
		}
		return nil
	})
}

// Kill stops one component of a running cluster, as a crash or a lost
// machine would; Down still cleans the rest up.
func (c *Cluster) Kill(component string) error {
	pid, ok := c.state.PIDs[component]
	if !ok {
		return fmt.Errorf("cluster %s runs no %s", c.Dir, component)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// multiKueueRole is config/multikueue's Role: trainjob-kueue's read of the
// workers' kubeconfig Secrets.
const multiKueueRole = "trainjob-kueue-multikueue-role"

// grantKubeconfigSecrets lists the workers' kubeconfig Secrets in the
// Role's resourceNames, as a batch admin does when adding a worker
// (docs/multikueue.md): trainjob-kueue reads those and no other Secret.
// A cluster without the Role (not a MultiKueue manager of ours) is left
// alone.
func grantKubeconfigSecrets(ctx context.Context, c client.Client, workers []string) error {
	role := &rbacv1.Role{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: kueueNamespace, Name: multiKueueRole}, role); err != nil {
		return client.IgnoreNotFound(err)
	}
	secrets := make([]string, 0, len(workers))
	for _, w := range workers {
		secrets = append(secrets, w+"-kubeconfig")
	}
	for i := range role.Rules {
		if slices.Contains(role.Rules[i].Resources, "secrets") {
			role.Rules[i].ResourceNames = secrets
		}
	}
	if err := c.Update(ctx, role); err != nil {
		return fmt.Errorf("granting the workers' kubeconfig Secrets in Role %s/%s: %w", kueueNamespace, multiKueueRole, err)
	}
	return nil
}

// createCheck creates the MultiKueueConfig listing the workers and the
// MultiKueue AdmissionCheck that uses it.
func createCheck(ctx context.Context, c client.Client, names []string) error {
	for _, o := range []client.Object{
		&kueue.MultiKueueConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "workers"},
			Spec:       kueue.MultiKueueConfigSpec{Clusters: names},
		},
		&kueue.AdmissionCheck{
			ObjectMeta: metav1.ObjectMeta{Name: MultiKueueCheck},
			Spec: kueue.AdmissionCheckSpec{
				ControllerName: kueue.MultiKueueControllerName,
				Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: kueue.SchemeGroupVersion.Group, Kind: "MultiKueueConfig", Name: "workers"},
			},
		},
	} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// UpMultiKueue brings up a MultiKueue set-up, a manager named names[0]
// and its workers names[1:], each with what settings gives for its role
// (manager true for the manager; Settings.MultiKueue is set here), and
// connects them (ConnectWorkers). Clusters already running with the same
// settings are reused.
func UpMultiKueue(ctx context.Context, root string, names []string, progress io.Writer, settings func(manager bool) Settings) (*Cluster, []*Cluster, error) {
	if len(names) < 2 {
		return nil, nil, fmt.Errorf("a MultiKueue set-up is a manager and at least one worker, not %v", names)
	}
	clusters := make([]*Cluster, len(names))
	for i, name := range names {
		s := settings(i == 0)
		s.MultiKueue = ""
		if i == 0 {
			s.MultiKueue = MultiKueueManager
		}
		c, err := Up(ctx, Options{Name: name, Root: root, Progress: progress, Settings: s})
		if err != nil {
			return nil, nil, fmt.Errorf("bringing up %s: %w", name, err)
		}
		clusters[i] = c
	}
	workers := map[string]*Cluster{}
	for i, name := range names[1:] {
		workers[name] = clusters[i+1]
	}
	if err := ConnectWorkers(ctx, clusters[0], workers); err != nil {
		return nil, nil, fmt.Errorf("connecting the workers: %w", err)
	}
	return clusters[0], clusters[1:], nil
}
