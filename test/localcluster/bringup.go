package localcluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Namespaces the components live in, as in their own manifests.
const (
	kueueNamespace   = "kueue-system"
	trainerNamespace = "kubeflow-system"
	jobsetNamespace  = "jobset-system"
	ourNamespace     = "trainjob-kueue-system"
)

// Identities: every component has its own client certificate. The upstream
// components act as cluster admins here; trainjob-kueue gets exactly the
// RBAC of config/rbac, so the local cluster proves it is enough.
var identities = map[string][]string{
	"admin":                      {"kubernetes-admin", "system:masters"},
	"kube-controller-manager":    {"system:kube-controller-manager", "system:masters"},
	"kube-scheduler":             {"system:kube-scheduler", "system:masters"},
	"kwok":                       {"system:kwok", "system:masters"},
	"kueue":                      {"system:serviceaccount:kueue-system:kueue-controller-manager", "system:masters"},
	"trainer-controller-manager": {"system:serviceaccount:kubeflow-system:kubeflow-trainer-controller-manager", "system:masters"},
	"jobset-controller-manager":  {"system:serviceaccount:jobset-system:jobset-controller-manager", "system:masters"},
	"trainjob-kueue":             {"system:serviceaccount:trainjob-kueue-system:trainjob-kueue-controller-manager", "system:serviceaccounts", "system:serviceaccounts:trainjob-kueue-system"},
}

type bringUp struct {
	o     Options
	c     *Cluster
	start time.Time

	bins  map[string]string
	ports map[string]int
	pids  map[string]int
	cmds  map[string]command
	ca    *CA
	admin client.Client
}

func (b *bringUp) step(format string, args ...any) {
	fmt.Fprintf(b.o.Progress, "[%4.0fs] %s\n", time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
}

func (b *bringUp) path(parts ...string) string {
	return filepath.Join(append([]string{b.c.Dir}, parts...)...)
}

func (b *bringUp) run(ctx context.Context) error {
	b.bins, b.ports, b.pids, b.cmds = map[string]string{}, map[string]int{}, map[string]int{}, map[string]command{}
	for _, d := range []string{"config", "certs", "logs", "pids", "bin"} {
		if err := os.MkdirAll(b.path(d), 0o755); err != nil {
			return err
		}
	}
	if err := b.build(ctx); err != nil {
		return err
	}
	if err := b.allocatePorts(); err != nil {
		return err
	}
	if err := b.pki(); err != nil {
		return err
	}
	if err := b.startAPIServer(ctx); err != nil {
		return err
	}
	if err := b.install(ctx); err != nil {
		return err
	}
	if err := b.startControllers(ctx); err != nil {
		return err
	}
	st := &state{Settings: b.o.Settings, Ports: b.ports, PIDs: b.pids, Commands: b.cmds}
	if err := st.write(b.c.Dir); err != nil {
		return err
	}
	b.c.state = st
	b.step("cluster %q is up: export KUBECONFIG=%s", b.o.Name, b.c.Kubeconfig)
	return nil
}

// runs tells whether the cluster runs a component: a MultiKueue manager
// runs no pods, hence no scheduler, kubelets or JobSet controller, and
// Trainer's controller only where it honours spec.managedBy (v2.3+).
func (b *bringUp) runs(component string) bool {
	if component == "trainjob-kueue" {
		return b.o.Integration == IntegrationOurs
	}
	if b.o.MultiKueue != MultiKueueManager {
		return true
	}
	switch component {
	case "kube-scheduler", "kwok", "jobset-controller-manager":
		return false
	case "trainer-controller-manager":
		return TrainerHonoursManagedBy(b.o.TrainerVersion)
	}
	return true
}

// TrainerHonoursManagedBy: Trainer's controller skips TrainJobs managed by
// another controller from v2.3 on (kubeflow/trainer#3632).
func TrainerHonoursManagedBy(version string) bool {
	for _, old := range []string{"v2.0.", "v2.1.", "v2.2."} {
		if strings.HasPrefix(version, old) {
			return false
		}
	}
	return true
}

// buildStreams are the components to build, in groups that share compiled
// packages (hack/align's families; trainjob-kueue, built from the working
// tree, with the main module's). Within a group one after another, so its
// first build compiles what the others reuse; the groups side by side, so
// one group's single-threaded steps (linking, a package nothing else waits
// for) leave the CPU to the others: a cold start takes minutes less.
func (b *bringUp) buildStreams() [][]string {
	streams := [][]string{
		{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"},
		{"kube-scheduler", "jobset-controller-manager", "trainer-controller-manager"},
		{"kwok", "kueue"},
	}
	if b.o.Integration == IntegrationOurs {
		streams[2] = append(streams[2], "trainjob-kueue")
	}
	return streams
}

func (b *bringUp) build(ctx context.Context) error {
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	for _, stream := range b.buildStreams() {
		g.Go(func() error {
			for _, name := range stream {
				bin, err := b.buildOne(ctx, name)
				if err != nil {
					return err
				}
				mu.Lock()
				b.bins[name] = bin
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// kubectl next to the kubeconfig, for people.
	return os.Symlink(b.bins["kubectl"], b.path("bin", "kubectl"))
}

// buildOne builds a component into the machine's binary cache (or finds it
// there) and returns its path; trainjob-kueue goes to the cluster's bin/.
func (b *bringUp) buildOne(ctx context.Context, name string) (string, error) {
	if name == "trainjob-kueue" {
		b.step("binary trainjob-kueue (from the working tree)")
		out := b.path("bin", "trainjob-kueue")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/trainjob-kueue")
		cmd.Dir = b.o.Root
		cmd.Stderr = b.o.Progress
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("building trainjob-kueue: %w", err)
		}
		return out, nil
	}
	b.step("binary %s", name)
	cmd := exec.CommandContext(ctx, filepath.Join(b.o.Root, "hack", "component.sh"), name)
	cmd.Env = append(os.Environ(), "TRAINER_VERSION="+b.o.TrainerVersion, "KUEUE_VERSION="+b.o.KueueVersion)
	cmd.Stderr = b.o.Progress
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func (b *bringUp) allocatePorts() error {
	names := []string{"etcd", "etcd-peer", "apiserver", "kwok",
		"kueue-webhook", "kueue-metrics", "kueue-health", "kueue-visibility",
		"jobset-webhook", "jobset-metrics", "jobset-health",
		"trainer-webhook", "trainer-metrics", "trainer-health",
		"ours-webhook", "ours-metrics", "ours-health", "ours-pprof"}
	ports, err := FreePorts(len(names))
	if err != nil {
		return fmt.Errorf("choosing ports: %w", err)
	}
	for i, name := range names {
		b.ports[name] = ports[i]
	}
	return nil
}

func (b *bringUp) pki() error {
	var err error
	if b.ca, err = NewCA("trainjob-kueue-local-" + b.o.Name); err != nil {
		return err
	}
	if err := os.WriteFile(b.path("certs", "ca.crt"), b.ca.CertPEM, 0o644); err != nil {
		return err
	}
	for name, dir := range map[string]string{"apiserver": "apiserver", "webhooks": "webhook"} {
		kp, err := b.ca.Serving(name)
		if err != nil {
			return err
		}
		if err := kp.WriteTLS(b.path("certs", dir)); err != nil {
			return err
		}
	}
	// Kueue's visibility server: kube-apiserver's aggregation layer checks
	// the name of the Service its APIServices name.
	vis, err := b.ca.Serving("kueue-visibility", visibilityService+"."+kueueNamespace+".svc")
	if err != nil {
		return err
	}
	if err := vis.WriteTLS(b.path("certs", "visibility")); err != nil {
		return err
	}
	// The aggregation layer's client: kube-apiserver proxies requests for
	// aggregated APIs (Kueue's visibility API) with it, naming the user in
	// request headers.
	front, err := b.ca.Client(frontProxyClient)
	if err != nil {
		return err
	}
	if err := front.WriteTLS(b.path("certs", "front-proxy")); err != nil {
		return err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(b.path("certs", "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", b.ports["apiserver"])
	for who, id := range identities {
		kp, err := b.ca.Client(id[0], id[1:]...)
		if err != nil {
			return err
		}
		path := b.path("config", who+".kubeconfig")
		if who == "admin" {
			path = b.c.Kubeconfig
		}
		if err := WriteKubeconfig(path, server, b.ca.CertPEM, kp, who); err != nil {
			return err
		}
	}
	return os.WriteFile(b.path("config", "audit-policy.yaml"), []byte(auditPolicy(b.o.AuditTrainJobBodies)), 0o644)
}

// auditPolicy records every request at Metadata level; with trainJobBodies,
// writes to TrainJobs with the object sent and the object stored.
func auditPolicy(trainJobBodies bool) string {
	policy := `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
`
	if trainJobBodies {
		policy += `- level: RequestResponse
  verbs: ["create", "update", "patch"]
  resources:
  - group: trainer.kubeflow.org
    resources: ["trainjobs", "trainjobs/status"]
`
	}
	return policy + "- level: Metadata\n"
}

func (b *bringUp) kubeconfig(who string) string { return b.path("config", who+".kubeconfig") }

func (b *bringUp) launch(name string, env []string, args ...string) error {
	b.step("starting %s", name)
	pid, err := startProcess(b.c.Dir, name, env, b.bins[name], args...)
	if err != nil {
		return err
	}
	b.pids[name] = pid
	b.cmds[name] = command{Bin: b.bins[name], Args: args, Env: env}
	return nil
}

func (b *bringUp) startAPIServer(ctx context.Context) error {
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", b.ports["etcd"])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", b.ports["etcd-peer"])
	if err := b.launch("etcd", nil,
		"--data-dir="+b.path("etcd"), "--name=default",
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		// A playground on one machine: durability buys nothing here.
		"--unsafe-no-fsync=true",
	); err != nil {
		return err
	}
	if err := b.launch("kube-apiserver", nil,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", b.ports["apiserver"]),
		"--tls-cert-file="+b.path("certs", "apiserver", "tls.crt"),
		"--tls-private-key-file="+b.path("certs", "apiserver", "tls.key"),
		"--client-ca-file="+b.path("certs", "ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+b.path("certs", "sa.key"),
		"--service-account-signing-key-file="+b.path("certs", "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// No kubelet mounts service account tokens for kwok's pods.
		"--disable-admission-plugins=ServiceAccount",
		"--audit-log-path="+b.c.AuditLog(),
		"--audit-policy-file="+b.path("config", "audit-policy.yaml"),
		"--profiling=false",
		// The aggregation layer, as kubeadm sets it up.
		"--requestheader-client-ca-file="+b.path("certs", "ca.crt"),
		"--requestheader-allowed-names="+frontProxyClient,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file="+b.path("certs", "front-proxy", "tls.crt"),
		"--proxy-client-key-file="+b.path("certs", "front-proxy", "tls.key"),
		fmt.Sprintf("--enable-aggregator-routing=%t", b.o.EndpointRouting),
	); err != nil {
		return err
	}
	b.step("waiting for kube-apiserver")
	cfg, err := clientcmd.BuildConfigFromFlags("", b.c.Kubeconfig)
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	if err := poll(ctx, 90*time.Second, func() error {
		if !alive(b.pids["kube-apiserver"]) {
			return errFatal(fmt.Errorf("kube-apiserver exited; see %s", b.c.Logs("kube-apiserver")))
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		b.admin = c
		return httpsOK(cfg.Host+"/readyz", b.c.Kubeconfig)
	}); err != nil {
		return fmt.Errorf("kube-apiserver not ready: %w", err)
	}
	return nil
}

// install creates namespaces, every component's CRDs and our RBAC.
func (b *bringUp) install(ctx context.Context) error {
	for _, ns := range []string{kueueNamespace, trainerNamespace, jobsetNamespace, ourNamespace} {
		if err := b.apply(ctx, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
			return err
		}
	}
	b.step("installing CRDs")
	files, err := b.crdFiles()
	if err != nil {
		return err
	}
	crds, err := ReadCRDs(files...)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := b.admin.Create(ctx, crd); err != nil {
			return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		if err := poll(ctx, 60*time.Second, func() error {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := b.admin.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
				return err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("CRD %s not established", crd.Name)
		}); err != nil {
			return err
		}
	}
	docs, err := ReadDocs(filepath.Join(b.o.Root, "config", "rbac", "role.yaml"))
	if err != nil {
		return err
	}
	for _, d := range docs {
		obj := map[string]any{}
		if err := yaml.Unmarshal(d, &obj); err != nil {
			return err
		}
		if err := b.apply(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

func (b *bringUp) apply(ctx context.Context, obj map[string]any) error {
	u := &unstructured.Unstructured{Object: obj}
	if err := b.admin.Create(ctx, u); err != nil {
		return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

func (b *bringUp) toolsDir(tool string) string { return filepath.Join(b.o.Root, "hack", "tools", tool) }

func (b *bringUp) crdFiles() ([]string, error) {
	kueue, err := ModuleDir(b.toolsDir("kueue-"+b.o.KueueVersion), "sigs.k8s.io/kueue")
	if err != nil {
		return nil, err
	}
	trainer, err := ModuleDir(b.toolsDir("trainer-"+b.o.TrainerVersion), "github.com/kubeflow/trainer/v2")
	if err != nil {
		return nil, err
	}
	jobset, err := ModuleDir(b.toolsDir("jobset-"+jobsetFor(b.o.TrainerVersion)), "sigs.k8s.io/jobset")
	if err != nil {
		return nil, err
	}
	sp, err := ModuleDir(b.toolsDir("scheduler"), "sigs.k8s.io/scheduler-plugins")
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(kueue, "config/components/crd/bases/*.yaml"))
	if err != nil {
		return nil, err
	}
	trainerCRDs, err := filepath.Glob(filepath.Join(trainer, "manifests/base/crds/trainer.kubeflow.org_*.yaml"))
	if err != nil {
		return nil, err
	}
	files = append(files, trainerCRDs...)
	files = append(files,
		filepath.Join(jobset, "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"),
		filepath.Join(sp, "config/crd/bases/scheduling.x-k8s.io_podgroups.yaml"))
	return files, nil
}

// jobsetFor is the JobSet release a Trainer release pins in its go.mod.
func jobsetFor(trainerVersion string) string {
	return map[string]string{"v2.0.1": "v0.8.2", "v2.1.0": "v0.10.1", "v2.2.0": "v0.11.1", "v2.3.0": "v0.12.0"}[trainerVersion]
}

func (b *bringUp) startControllers(ctx context.Context) error {
	if err := b.launch("kube-controller-manager", nil,
		"--kubeconfig="+b.kubeconfig("kube-controller-manager"),
		"--controllers=job-controller,garbage-collector-controller,namespace-controller,node-lifecycle-controller,pod-garbage-collector-controller,ttl-after-finished-controller",
		"--use-service-account-credentials=false",
		"--secure-port=0",
		"--leader-elect=false",
	); err != nil {
		return err
	}
	schedCfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: %s
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 60
`, b.kubeconfig("kube-scheduler"))
	if err := os.WriteFile(b.path("config", "scheduler.yaml"), []byte(schedCfg), 0o644); err != nil {
		return err
	}
	if b.runs("kube-scheduler") {
		if err := b.launch("kube-scheduler", nil, "--config="+b.path("config", "scheduler.yaml"), "--secure-port=0"); err != nil {
			return err
		}
	}
	if b.runs("kwok") {
		stages, err := b.kwokStages()
		if err != nil {
			return err
		}
		if err := b.launch("kwok", nil,
			"--kubeconfig="+b.kubeconfig("kwok"),
			"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
			"--config="+strings.Join(stages, ","),
			fmt.Sprintf("--server-address=127.0.0.1:%d", b.ports["kwok"]),
		); err != nil {
			return err
		}
	}

	webhookCerts := b.path("certs", "webhook")
	kueueCfg, err := b.kueueConfig()
	if err != nil {
		return err
	}
	if err := b.launch("kueue", []string{"KUEUE_METRICS_CERTS_DIR=" + webhookCerts, "KUEUE_VISIBILITY_CERTS_DIR=" + b.path("certs", "visibility")},
		"--config="+kueueCfg, "--kubeconfig="+b.kubeconfig("kueue")); err != nil {
		return err
	}
	jobsetCfg := fmt.Sprintf(`apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: true
  resourceNamespace: %s
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
metrics:
  bindAddress: 127.0.0.1:%d
health:
  healthProbeBindAddress: 127.0.0.1:%d
`, jobsetNamespace, b.ports["jobset-webhook"], webhookCerts, b.ports["jobset-metrics"], b.ports["jobset-health"])
	if err := os.WriteFile(b.path("config", "jobset.yaml"), []byte(jobsetCfg), 0o644); err != nil {
		return err
	}
	if b.runs("jobset-controller-manager") {
		if err := b.launch("jobset-controller-manager", nil, "--config="+b.path("config", "jobset.yaml"), "--kubeconfig="+b.kubeconfig("jobset-controller-manager")); err != nil {
			return err
		}
	}
	trainerCfg := fmt.Sprintf(`apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
health:
  healthProbeBindAddress: 127.0.0.1:%d
  readinessEndpointName: readyz
  livenessEndpointName: healthz
metrics:
  bindAddress: 127.0.0.1:%d
  secureServing: false
webhook:
  host: 127.0.0.1
  port: %d
leaderElection:
  leaderElect: true
  resourceName: trainer.kubeflow.org
  resourceNamespace: %s
  leaseDuration: 15s
  renewDeadline: 10s
  retryPeriod: 2s
certManagement:
  enable: false
`, b.ports["trainer-health"], b.ports["trainer-metrics"], b.ports["trainer-webhook"], trainerNamespace)
	if err := os.WriteFile(b.path("config", "trainer.yaml"), []byte(trainerCfg), 0o644); err != nil {
		return err
	}
	// Trainer reads its webhook certificate only from controller-runtime's
	// default directory under TMPDIR.
	trainerTmp := b.path("trainer-tmp")
	kp, err := os.ReadFile(filepath.Join(webhookCerts, "tls.crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(filepath.Join(webhookCerts, "tls.key"))
	if err != nil {
		return err
	}
	if err := (KeyPair{Cert: kp, Key: key}).WriteTLS(filepath.Join(trainerTmp, "k8s-webhook-server", "serving-certs")); err != nil {
		return err
	}
	trainerArgs := []string{"--config=" + b.path("config", "trainer.yaml"), "--kubeconfig=" + b.kubeconfig("trainer-controller-manager")}
	if strings.HasPrefix(b.o.TrainerVersion, "v2.0.") {
		// v2.0 takes flags only, and serves webhooks on every interface.
		trainerArgs = []string{
			"--kubeconfig=" + b.kubeconfig("trainer-controller-manager"),
			fmt.Sprintf("--webhook-server-port=%d", b.ports["trainer-webhook"]),
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", b.ports["trainer-health"]),
			"--metrics-bind-address=0",
		}
	}
	if b.runs("trainer-controller-manager") {
		if err := b.launch("trainer-controller-manager", []string{"TMPDIR=" + trainerTmp}, trainerArgs...); err != nil {
			return err
		}
	}

	if err := b.registerWebhooks(ctx); err != nil {
		return err
	}
	if err := b.registerVisibility(ctx, kueueCfg); err != nil {
		return err
	}
	if b.o.Integration == IntegrationOurs {
		if err := b.launch("trainjob-kueue", nil,
			"--kubeconfig="+b.kubeconfig("trainjob-kueue"),
			"--kueue-config="+kueueCfg,
			"--cert-management=external",
			"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", b.ports["ours-webhook"]),
			"--webhook-cert-dir="+webhookCerts,
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", b.ports["ours-metrics"]),
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", b.ports["ours-health"]),
			fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", b.ports["ours-pprof"]),
			"--leader-elect", "--leader-election-namespace="+ourNamespace, "--namespace="+ourNamespace,
			// The API server calls this webhook at a loopback URL, not
			// through endpoints that lag a stop: nothing to drain.
			"--shutdown-delay=0s",
		); err != nil {
			return err
		}
		if err := b.waitPort(ctx, "trainjob-kueue", b.ports["ours-webhook"]); err != nil {
			return err
		}
		hooks, err := WebhookConfigs(filepath.Join(b.o.Root, "config", "webhook", "manifests.yaml"), "trainjob-kueue",
			fmt.Sprintf("https://127.0.0.1:%d", b.ports["ours-webhook"]), b.ca.CertPEM, All)
		if err != nil {
			return err
		}
		// Loopback registrations under names of their own: config/default's
		// (service-based) configurations can be applied beside them.
		for _, h := range hooks {
			h.SetName("local-" + h.GetName())
		}
		if err := b.createAll(ctx, hooks); err != nil {
			return err
		}
	}
	return b.waitHealthy(ctx)
}

func (b *bringUp) kwokStages() ([]string, error) {
	dir, err := ModuleDir(b.toolsDir("kwok"), "sigs.k8s.io/kwok")
	if err != nil {
		return nil, err
	}
	stages := []string{
		"kustomize/stage/node/fast/node-initialize.yaml",
		"kustomize/stage/node/heartbeat/node-heartbeat.yaml",
		"kustomize/stage/pod/general/pod-create.yaml",
		"kustomize/stage/pod/general/pod-init-container-running.yaml",
		"kustomize/stage/pod/general/pod-init-container-completed.yaml",
		"kustomize/stage/pod/general/pod-ready.yaml",
		"kustomize/stage/pod/general/pod-complete.yaml",
		"kustomize/stage/pod/general/pod-delete.yaml",
	}
	for i := range stages {
		stages[i] = filepath.Join(dir, stages[i])
	}
	return stages, nil
}

// kueueConfig writes Kueue's Configuration: config/kueue (or KUEUE_CONFIG)
// with the built-in TrainJob integration on only for INTEGRATION=intree,
// and loopback serving settings.
func (b *bringUp) kueueConfig() (string, error) {
	src := b.o.KueueConfigFile
	if src == "" {
		src = filepath.Join(b.o.Root, "config", "kueue", "controller_manager_config.yaml")
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", src, err)
	}
	integrations, _ := cfg["integrations"].(map[string]any)
	if integrations == nil {
		integrations = map[string]any{}
	}
	var frameworks []any
	for _, f := range asSlice(integrations["frameworks"]) {
		if f != "trainer.kubeflow.org/trainjob" {
			frameworks = append(frameworks, f)
		}
	}
	if b.o.Integration == IntegrationInTree {
		frameworks = append(frameworks, "trainer.kubeflow.org/trainjob")
		// Kueue refuses a generic MultiKueue adapter for a kind it has a
		// built-in one for.
		if mk, _ := cfg["multiKueue"].(map[string]any); mk != nil {
			var keep []any
			for _, f := range asSlice(mk["externalFrameworks"]) {
				if m, _ := f.(map[string]any); m["name"] != "TrainJob.v1alpha1.trainer.kubeflow.org" {
					keep = append(keep, f)
				}
			}
			mk["externalFrameworks"] = keep
		}
	}
	integrations["frameworks"] = frameworks
	cfg["integrations"] = integrations
	cfg["namespace"] = kueueNamespace
	le, _ := cfg["leaderElection"].(map[string]any)
	if le == nil {
		le = map[string]any{"leaderElect": true}
	}
	// Kueue's visibility API: served on loopback and registered as an
	// APIService (registerVisibility) where the release lets us choose
	// its port; off otherwise.
	gates, _ := cfg["featureGates"].(map[string]any)
	if gates == nil {
		gates = map[string]any{}
	}
	if _, set := gates["VisibilityOnDemand"]; !set {
		// With EndpointRouting the API server would reach the loopback
		// visibility server through no Service it can resolve.
		gates["VisibilityOnDemand"] = visibilityPortConfigurable(b.o.KueueVersion) && !b.o.EndpointRouting
	}
	set, err := parseGates(b.o.KueueFeatureGates)
	if err != nil {
		return "", err
	}
	for g, on := range set {
		gates[g] = on
	}
	cfg["featureGates"] = gates
	if visibilityPortConfigurable(b.o.KueueVersion) {
		cfg["visibilityServer"] = map[string]any{"bindAddress": "127.0.0.1", "bindPort": b.ports["kueue-visibility"]}
	}
	// Out of a cluster the namespace of the lease must be named.
	le["resourceNamespace"] = kueueNamespace
	cfg["leaderElection"] = le
	if b.o.MultiKueue == MultiKueueManager {
		mk, _ := cfg["multiKueue"].(map[string]any)
		if mk == nil {
			mk = map[string]any{}
		}
		// Kueue's default of 15 minutes suits production; a playground
		// shows a lost worker's jobs moving on within a minute.
		if _, set := mk["workerLostTimeout"]; !set {
			mk["workerLostTimeout"] = "30s"
		}
		if _, set := mk["gcInterval"]; !set {
			mk["gcInterval"] = "20s"
		}
		cfg["multiKueue"] = mk
		// MultiKueue watches every enabled framework's kind on every
		// worker and fails to connect to a worker missing one of their
		// CRDs ("no matches for kind"): keep the kinds the workers have.
		var onWorkers []any
		for _, f := range frameworks {
			if f == "batch/job" || f == "jobset.x-k8s.io/jobset" {
				onWorkers = append(onWorkers, f)
			}
		}
		integrations["frameworks"] = onWorkers
	}
	cfg["internalCertManagement"] = map[string]any{"enable": false}
	cfg["webhook"] = map[string]any{"host": "127.0.0.1", "port": b.ports["kueue-webhook"], "certDir": b.path("certs", "webhook")}
	cfg["metrics"] = map[string]any{"bindAddress": fmt.Sprintf("127.0.0.1:%d", b.ports["kueue-metrics"])}
	cfg["health"] = map[string]any{"healthProbeBindAddress": fmt.Sprintf("127.0.0.1:%d", b.ports["kueue-health"])}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := b.path("config", "kueue.yaml")
	return path, os.WriteFile(path, out, 0o644)
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// registerWebhooks points Kueue's, JobSet's and Trainer's webhook
// configurations at their loopback servers once those listen.
func (b *bringUp) registerWebhooks(ctx context.Context) error {
	kueue, err := ModuleDir(b.toolsDir("kueue-"+b.o.KueueVersion), "sigs.k8s.io/kueue")
	if err != nil {
		return err
	}
	trainer, err := ModuleDir(b.toolsDir("trainer-"+b.o.TrainerVersion), "github.com/kubeflow/trainer/v2")
	if err != nil {
		return err
	}
	jobset, err := ModuleDir(b.toolsDir("jobset-"+jobsetFor(b.o.TrainerVersion)), "sigs.k8s.io/jobset")
	if err != nil {
		return err
	}
	for _, w := range []struct {
		component, file, prefix, port string
	}{
		{"kueue", filepath.Join(kueue, "config/components/webhook/manifests.yaml"), "kueue", "kueue-webhook"},
		{"jobset-controller-manager", filepath.Join(jobset, "config/components/webhook/manifests.yaml"), "jobset", "jobset-webhook"},
		{"trainer-controller-manager", filepath.Join(trainer, "manifests/base/webhook/manifests.yaml"), "trainer", "trainer-webhook"},
	} {
		if !b.runs(w.component) {
			continue
		}
		if err := b.waitPort(ctx, w.component, b.ports[w.port]); err != nil {
			return err
		}
		hooks, err := WebhookConfigs(w.file, w.prefix, fmt.Sprintf("https://127.0.0.1:%d", b.ports[w.port]), b.ca.CertPEM, All)
		if err != nil {
			return err
		}
		if err := b.createAll(ctx, hooks); err != nil {
			return err
		}
	}
	return nil
}

func (b *bringUp) createAll(ctx context.Context, objs []client.Object) error {
	for _, o := range objs {
		if err := b.admin.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %s: %w", o.GetName(), err)
		}
	}
	return nil
}

func (b *bringUp) waitPort(ctx context.Context, component string, port int) error {
	b.step("waiting for %s to serve on 127.0.0.1:%d", component, port)
	return poll(ctx, 120*time.Second, func() error {
		if !alive(b.pids[component]) {
			return errFatal(fmt.Errorf("%s exited; see %s", component, b.c.Logs(component)))
		}
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return err
		}
		return conn.Close()
	})
}

func (b *bringUp) waitHealthy(ctx context.Context) error {
	checks := map[string]string{
		"kueue":                      fmt.Sprintf("http://127.0.0.1:%d/readyz", b.ports["kueue-health"]),
		"jobset-controller-manager":  fmt.Sprintf("http://127.0.0.1:%d/readyz", b.ports["jobset-health"]),
		"trainer-controller-manager": fmt.Sprintf("http://127.0.0.1:%d/readyz", b.ports["trainer-health"]),
	}
	checks["trainjob-kueue"] = fmt.Sprintf("http://127.0.0.1:%d/readyz", b.ports["ours-health"])
	names := make([]string, 0, len(checks))
	for n := range checks {
		if b.runs(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		b.step("waiting for %s to be ready", name)
		if err := poll(ctx, 120*time.Second, func() error {
			if !alive(b.pids[name]) {
				return errFatal(fmt.Errorf("%s exited; see %s", name, b.c.Logs(name)))
			}
			resp, err := http.Get(checks[name])
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %s", checks[name], resp.Status)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	// Components without a health endpoint here must at least stay up.
	for _, name := range []string{"etcd", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if !b.runs(name) {
			continue
		}
		if !alive(b.pids[name]) {
			return fmt.Errorf("%s exited; see %s", name, b.c.Logs(name))
		}
	}
	return nil
}

// fatal errors stop a poll at once.
type fatalError struct{ error }

func errFatal(err error) error { return fatalError{err} }

func poll(ctx context.Context, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return nil
		}
		if fe, ok := err.(fatalError); ok {
			return fe.error
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return err
}

// httpsOK GETs url authenticated as the kubeconfig's user.
func httpsOK(url, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAData)
	cert, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}}
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body := new(bytes.Buffer)
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s %s", url, resp.Status, body.String())
	}
	return nil
}
