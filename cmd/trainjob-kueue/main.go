// Command trainjob-kueue is the controller manager of the out-of-tree Kueue
// integration for Kubeflow Trainer TrainJobs. It only wires: flags, Kueue's
// configuration, the manager and the integration.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/informercache"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/restart"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

type flags struct {
	// qps, burst: the client budget (0: from Kueue's, clientBudget).
	qps   float64
	burst int
	// concurrency of the TrainJob controllers (0: from Kueue's).
	concurrency        int
	kueueConfig        string
	featureGates       string
	metricsAddr        string
	metricsSecure      bool
	probeAddr          string
	leaderElect        bool
	leaderElectNS      string
	webhookHost        string
	webhookPort        int
	webhookCertDir     string
	disableWebhook     bool
	queueCondition     bool
	gangRetryInterval  time.Duration
	certManagement     string
	namespace          string
	webhookService     string
	webhookSecret      string
	mutatingWebhooks   string
	validatingWebhooks string
	pprofAddr          string
	enableHTTP2        bool
	printVersion       bool
	shutdownDelay      time.Duration
}

// version and commit are stamped by the build (-ldflags -X main.version=…
// -X main.commit=…, hack/build-manager.sh).
var (
	version = "dev"
	commit  = "unknown"
)

func main() {
	var f flags
	flag.StringVar(&f.kueueConfig, "kueue-config", "", "Kueue's own Configuration file (the one the deployed Kueue runs with), so queueing settings and feature gates agree.")
	flag.StringVar(&f.featureGates, "feature-gates", "", "Kueue feature gates overriding the Kueue configuration's, as A=true,B=false.")
	flag.StringVar(&f.metricsAddr, "metrics-bind-address", ":8443", "Metrics endpoint address; 0 disables it.")
	flag.BoolVar(&f.metricsSecure, "metrics-secure", true, "Serve metrics over HTTPS with Kubernetes authentication and authorization.")
	flag.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "Health and readiness probe address.")
	flag.BoolVar(&f.leaderElect, "leader-elect", false, "Elect a leader, for running several replicas.")
	flag.StringVar(&f.leaderElectNS, "leader-election-namespace", "", "Namespace of the leader election lease (default: the pod's).")
	flag.StringVar(&f.webhookHost, "webhook-host", "", "Address the webhook server listens on.")
	flag.IntVar(&f.webhookPort, "webhook-port", 9443, "Port of the webhook server.")
	flag.StringVar(&f.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "Directory holding tls.crt and tls.key for the webhook server.")
	flag.StringVar(&f.certManagement, "cert-management", "internal", "internal: generate and rotate the webhook certificate (Secret --webhook-secret-name, caBundle of our webhook configurations); external: read it from --webhook-cert-dir (cert-manager, a mounted Secret).")
	flag.StringVar(&f.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "Namespace the manager runs in (default: $POD_NAMESPACE).")
	flag.StringVar(&f.webhookService, "webhook-service-name", "trainjob-kueue-webhook-service", "Service in front of the webhook server, for the certificate's DNS name.")
	flag.StringVar(&f.webhookSecret, "webhook-secret-name", "trainjob-kueue-webhook-server-cert", "Secret the internal certificate management keeps the certificate in.")
	flag.StringVar(&f.mutatingWebhooks, "mutating-webhook-configuration-name", "trainjob-kueue-mutating-webhook-configuration", "MutatingWebhookConfiguration whose caBundle the internal certificate management keeps (an install that renames it, as a kustomize namePrefix does, sets this and the RBAC's resourceNames).")
	flag.StringVar(&f.validatingWebhooks, "validating-webhook-configuration-name", "trainjob-kueue-validating-webhook-configuration", "ValidatingWebhookConfiguration whose caBundle the internal certificate management keeps.")
	flag.StringVar(&f.pprofAddr, "pprof-bind-address", "", "Serve Go's pprof profiles on this loopback address, as 127.0.0.1:6060 (off when empty).")
	flag.BoolVar(&f.enableHTTP2, "enable-http2", false, "Serve the webhook and metrics over HTTP/2 too (off: HTTP/2 rapid-reset attacks, CVE-2023-44487).")
	flag.BoolVar(&f.printVersion, "version", false, "Print the version and commit, and exit.")
	flag.DurationVar(&f.gangRetryInterval, "gang-retry-interval", gang.DefaultRetryInterval, "How often a started job's gang that waits for room is retried (its PodGroup touched): coscheduling itself only retries it on new pods, PodGroup changes and kube-scheduler's 5-minute flush.")
	flag.DurationVar(&f.shutdownDelay, "shutdown-delay", 5*time.Second, "After SIGTERM, keep serving this long (readiness failing) before stopping: the API server keeps sending webhook calls to a terminating pod until its endpoint's change reaches it. Keep it under the pod's terminationGracePeriodSeconds.")
	flag.Float64Var(&f.qps, "kube-api-qps", 0, "The manager's own client budget (queries per second; 0: twice Kueue's clientConnection.qps, at least 100). A burst of arrivals is a Workload create each, and must not wait behind Kueue's default budget (50).")
	flag.IntVar(&f.burst, "kube-api-burst", 0, "The manager's own client burst (0: twice Kueue's clientConnection.burst, at least 200).")
	flag.IntVar(&f.concurrency, "trainjob-concurrency", 0, "How many TrainJobs each of the manager's TrainJob controllers reconciles at once (0: ten times Kueue's controller.groupKindConcurrency for TrainJob, at least 50). Its reconciles wait on the API server, not the CPU: a burst of arrivals is a Workload create each.")
	flag.BoolVar(&f.queueCondition, "queue-condition", true, "Keep the condition trainjob-kueue.dev/Admitted on each queued TrainJob (queued, held, admitted, preempted, evicted: kubectl wait and the Kubeflow SDK read it), one status write per change of state. Off: no such write, and the condition an earlier run wrote stays as it was.")
	flag.BoolVar(&f.disableWebhook, "disable-webhook", false, "Do not serve the TrainJob webhook (testing only: queued jobs could start unqueued).")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if f.printVersion {
		fmt.Printf("trainjob-kueue %s (commit %s)\n", version, commit)
		return
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	// client-go reports its rate limiter's waits to one hook per process,
	// which controller-runtime leaves unset: set once, for every run.
	throttle := metrics.NewClientThrottle()
	ctrlmetrics.Registry.MustRegister(throttle)
	clientmetrics.RateLimiterLatency = throttle

	signals := ctrl.SetupSignalHandler()
	serving, stopServing := context.WithCancel(context.Background())
	p := process{identity: restart.Identity(), webhooks: restart.NewWebhooks(serving, webhook.NewServer(webhook.Options{
		Host:    f.webhookHost,
		Port:    f.webhookPort,
		CertDir: f.webhookCertDir,
		TLSOpts: tlsOptions(f.enableHTTP2),
	}))}
	for ; ; p.runs++ {
		ctx, draining := restart.DrainAfter(signals, f.shutdownDelay, time.After)
		err := run(ctx, f, draining, p)
		if restart.InProcess(err, signals) {
			ctrl.Log.WithName("setup").Info("Restarting in process", "reason", err.Error())
			continue
		}
		// The last run is over: the webhook server answers the calls in
		// flight and stops.
		stopServing()
		p.webhooks.Wait(10 * time.Second)
		if err != nil {
			fmt.Fprintf(os.Stderr, "trainjob-kueue: %v\n", err)
			os.Exit(1)
		}
		return
	}
}

// process is what stays the same across the runs of one process.
type process struct {
	// identity names the process in the mode-change turn's Lease.
	identity string
	// runs counts the runs before this one (restarts for a mode change).
	runs int
	// webhooks is the webhook server, serving across the runs.
	webhooks *restart.Webhooks
}

func run(ctx context.Context, f flags, draining *atomic.Bool, p process) error {
	log := ctrl.Log.WithName("setup")
	log.Info("Starting", "version", version, "commit", commit, "run", p.runs+1)
	scheme := scheme.New()
	restCfg := ctrl.GetConfigOrDie()
	username, err := whoAmI(ctx, restCfg)
	if err != nil {
		return err
	}
	direct, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	facts, err := discover(ctx, restCfg, direct, f)
	if err != nil {
		return err
	}
	opts := integrationOptions(facts, username, f)
	if opts.BuiltInTrainJob {
		log.Info("Standing by: Kueue's configuration turns its built-in TrainJob integration on, so only the webhook is served (queued TrainJobs are suspended, bad ones refused); TrainJobs are taken over once the configuration turns it off", "kueueConfig", f.kueueConfig)
	}
	log.Info("Serving TrainJobs", "overrides", opts.Shape.Name(), "kueue", facts.Kueue.Name(), "maxPodSets", facts.Kueue.MaxPodSets,
		"waitForPodsReady", opts.WaitForPodsReady, "manager", opts.ManagerUsername, "podGroups", opts.Gangs.PodGroupCRD, "workloadAPI", opts.Gangs.WorkloadAPI)
	webhooks := p.webhooks.ForRun(draining)
	mgr, err := newManager(f, facts, restCfg, scheme, p.runs > 0, webhooks)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := restart.New(restart.Options{Client: direct, Namespace: turnNamespace(f), Identity: p.identity, Draining: draining, ShutdownDelay: f.shutdownDelay, Cancel: cancel})
	if err := watchRestarts(mgr, f, opts.Shared, func(err error) { r.Stop(ctx, err) }); err != nil {
		return err
	}
	opts.Metrics = metrics.NewMetrics()
	if err := opts.Metrics.Register(ctrlmetrics.Registry, mgr.GetClient()); err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	defer opts.Metrics.Unregister(ctrlmetrics.Registry)
	certsReady := make(chan struct{})
	if f.disableWebhook {
		f.certManagement = "external"
	}
	if err := manageCerts(mgr, f, certsReady, p.runs); err != nil {
		return err
	}
	// Controllers and webhook start once the serving certificate exists:
	// the webhook server cannot start without it, and reconciling before the
	// webhook answers would let jobs through unqueued.
	setupErr := make(chan error, 1)
	synced := &atomic.Bool{}
	go func() {
		<-certsReady
		err := setup(ctx, mgr, opts, wiring{webhook: !f.disableWebhook, queueCondition: f.queueCondition})
		setupErr <- err
		if err == nil && syncReads(ctx, mgr, opts, !f.disableWebhook) {
			// This run's webhooks answer from now on, the earlier run's
			// until now (restart.Webhooks).
			webhooks.Serve()
			synced.Store(true)
		}
	}()
	ready, err := addProbes(mgr, restart.Readiness{Draining: draining, CertsReady: certsReady, Synced: synced, Webhook: !f.disableWebhook,
		Started: func() error { return mgr.GetWebhookServer().StartedChecker()(nil) }, Answering: p.webhooks.Answering})
	if err != nil {
		return err
	}
	if err := r.AddTo(mgr, ready); err != nil {
		return err
	}
	return start(ctx, mgr, setupErr)
}

// discover learns the Facts: from the installed CRDs and Kueue's
// Configuration, and whether the API server serves Kubernetes' own
// PodGroups.
func discover(ctx context.Context, restCfg *rest.Config, direct client.Reader, f flags) (discovery.Facts, error) {
	facts, err := discovery.Discover(ctx, direct, f.kueueConfig, f.featureGates)
	if err != nil {
		return facts, err
	}
	disco, err := clientdiscovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		return facts, err
	}
	facts.WorkloadAPI, err = discovery.ServesWorkloadAPI(disco)
	return facts, err
}

// integrationOptions are the integration's options from what the manager
// learned at start (the settings it shares with every controller and
// webhook) and its flags (what the integration alone is tuned by).
func integrationOptions(facts discovery.Facts, username string, f flags) integration.Options {
	opts := integration.Options{Shared: settings.Shared{Shape: facts.Shape, KueueSettings: facts.Settings, Gangs: gang.Schedulers{PodGroupCRD: facts.PodGroups, WorkloadAPI: facts.WorkloadAPI}, ManagerUsername: username}}
	opts.PodSets.Defaulter, opts.PodSets.MaxPodSets, opts.PodSets.Topology = facts.Defaulter, facts.Kueue.MaxPodSets, facts.Topology
	opts.GangRetryInterval = f.gangRetryInterval
	return opts
}

// newManager is the controller manager: the deployed Kueue's client budget
// and concurrency, the trimmed one-pass cache, metrics, leader election
// and the run's part of the process's webhook server.
// restarted: the process ran a manager before (a mode change); the
// controllers' names were taken by it, and are again.
func newManager(f flags, facts discovery.Facts, restCfg *rest.Config, scheme *runtime.Scheme, restarted bool, webhooks webhook.Server) (ctrl.Manager, error) {
	controllerCfg := ctrlconfig.Controller{SkipNameValidation: ptr.To(restarted)}
	restCfg.QPS, restCfg.Burst = clientBudget(f, facts.Config.ClientConnection)
	controllerCfg.GroupKindConcurrency = concurrency(f, facts.Config.Controller)
	if err := checkPprofAddress(f.pprofAddr); err != nil {
		return nil, err
	}
	metricsOpts := metricsserver.Options{BindAddress: f.metricsAddr, SecureServing: f.metricsSecure, TLSOpts: tlsOptions(f.enableHTTP2)}
	if f.metricsSecure {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	// client-go's transport cache hands the manager's clients the same
	// connections.
	httpClient, err := rest.HTTPClientFor(restCfg)
	if err != nil {
		return nil, err
	}
	cacheOpts, err := informercache.Watches(informercache.Options(), restCfg, httpClient, scheme, &kueue.Workload{}, &trainjob.TrainJob{})
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Controller:              controllerCfg,
		PprofBindAddress:        f.pprofAddr,
		Metrics:                 metricsOpts,
		HealthProbeBindAddress:  f.probeAddr,
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        "trainjob-kueue.dev",
		LeaderElectionNamespace: f.leaderElectNS,
		// A leader that stops (a rolling upgrade, a deleted pod) hands the
		// lease over at once instead of leaving the standby to wait it out:
		// the process exits as soon as the manager returns, so nothing of
		// ours runs after the release.
		LeaderElectionReleaseOnCancel: true,
		WebhookServer:                 webhooks,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	return mgr, nil
}

// watchRestarts sets up the restart watchers (controllers.go) before the
// certificate wait: a mode change is seen even while it lasts.
func watchRestarts(mgr ctrl.Manager, f flags, s settings.Shared, stop func(error)) error {
	for _, c := range restartWatchers(f, s, stop) {
		if err := c.setup(mgr); err != nil {
			return fmt.Errorf("setting up %s: %w", c.name, err)
		}
	}
	return nil
}

// addProbes: alive while the process runs; ready as r's probe says. The
// stricter check is returned: the turn of a mode change is given back
// when it passes.
func addProbes(mgr ctrl.Manager, r restart.Readiness) (func() error, error) {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", func(*http.Request) error { return r.Probe() }); err != nil {
		return nil, err
	}
	return r.Check, nil
}

// start runs the manager until it stops, a setup fails, or a restart watch
// asks it to stop (then that is the error returned).
func start(ctx context.Context, mgr ctrl.Manager, setupErr <-chan error) error {
	runErr := make(chan error, 1)
	go func() { runErr <- mgr.Start(ctx) }()
	select {
	case err := <-setupErr:
		if err != nil {
			return err
		}
		err = <-runErr
		if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
			return cause
		}
		return err
	case err := <-runErr:
		if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
			return cause
		}
		return err
	}
}

// whoAmI asks the API server who we are, so the webhook can tell our own
// writes from users'.
func whoAmI(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("asking the API server who we are (SelfSubjectReview): %w", err)
	}
	return review.Status.UserInfo.Username, nil
}

// builtInCheckInterval: how often the Kueue configuration is re-read for a
// switch of TrainJob integrations (the kubelet refreshes a mounted
// ConfigMap within about a minute anyway).
const builtInCheckInterval = 10 * time.Second

// clientBudget is the manager's client QPS and burst: the flags', else
// twice the deployed Kueue's (at least 100 and 200). A burst of N arrivals
// is N Workload creates at once, beside the status writes of the jobs
// already queued: at Kueue's default budget (50, burst 100) a 150-job
// burst waited 1.5 s (p50) for its Workloads (docs/benchmark.md). Twice
// Kueue's keeps ours in proportion where an admin raised Kueue's.
func clientBudget(f flags, kueues *configapi.ClientConnection) (float32, int) {
	qps, burst := float32(100), 200
	switch {
	case kueues == nil || kueues.QPS == nil:
	case *kueues.QPS < 0:
		qps = *kueues.QPS // Kueue's client unlimited: ours too
	case 2**kueues.QPS > qps:
		qps = 2 * *kueues.QPS
	}
	if kueues != nil && kueues.Burst != nil && 2*int(*kueues.Burst) > burst {
		burst = 2 * int(*kueues.Burst)
	}
	if f.qps > 0 {
		qps = float32(f.qps)
	}
	if f.burst > 0 {
		burst = f.burst
	}
	return qps, burst
}

// trainJobGroupKind keys TrainJobs in controller.groupKindConcurrency.
const trainJobGroupKind = "TrainJob.trainer.kubeflow.org"

// concurrency is the controllers' concurrency per kind: Kueue's
// controller.groupKindConcurrency, with TrainJob's from the flag, else
// ten times Kueue's (at least 50). Kueue's value sizes its own in-tree
// TrainJob controller, whose reconciles are few per job; ours spend their
// time waiting on the API server (a Workload create, a start's patches)
// while the CPU idles: with 5 workers a 150-job burst waited seconds for
// its Workloads, and with 20 a batch of admissions still queued for a
// worker behind the burst's writes (207 reconciles waited 0.1–1 s at
// N = 500; 23 with 50, for the same CPU; docs/benchmark.md).
func concurrency(f flags, kueues *configapi.ControllerConfigurationSpec) map[string]int {
	out := map[string]int{}
	if kueues != nil {
		for k, v := range kueues.GroupKindConcurrency {
			out[k] = v
		}
	}
	n := max(50, 10*out[trainJobGroupKind])
	if f.concurrency > 0 {
		n = f.concurrency
	}
	out[trainJobGroupKind] = n
	return out
}

// turnNamespace is where the mode change's turn and roll call Leases
// live: beside the leader election's.
func turnNamespace(f flags) string {
	if f.leaderElectNS != "" {
		return f.leaderElectNS
	}
	return f.namespace
}
