// Package integration_test is the integration tier: a real kube-apiserver and
// etcd (built from Go modules by the Makefile), with Kueue's core controllers
// and scheduler, Trainer's controller and webhooks (at the version this
// module requires, whose TrainJobs carry spec.runtimePatches) running in
// this process next to trainjob-kueue, and JobSet's controller manager as a
// process of its own (see startJobSet). No Job controller runs: tests play
// its part by writing Job status.
package integration_test

import (
	"time"

	tjwebhook "github.com/trainjob-kueue/trainjob-kueue/webhook"

	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap/zapcore"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	kueuecore "sigs.k8s.io/kueue/pkg/controller/core"
	kueueindexer "sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	_ "sigs.k8s.io/kueue/pkg/controller/jobs/job"
	_ "sigs.k8s.io/kueue/pkg/controller/jobs/jobset"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/util/kubeversion"
	"sigs.k8s.io/kueue/pkg/util/roletracker"
	kueuewebhooks "sigs.k8s.io/kueue/pkg/webhooks"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainerconfig "github.com/kubeflow/trainer/v2/pkg/apis/config/v1alpha1"
	trainercontroller "github.com/kubeflow/trainer/v2/pkg/controller"
	trainerruntime "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	trainerwebhooks "github.com/kubeflow/trainer/v2/pkg/webhooks"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/informercache"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/multikueue"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// managerUser is the identity trainjob-kueue runs as in these tests; the
// test's own client is a different user, as a person would be.
const managerUser = "system:serviceaccount:trainjob-kueue-system:trainjob-kueue"

var (
	k8s     client.Client // the test's direct client, as a user
	restCfg *rest.Config
	ctx     context.Context
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// Controller logs go to a file: tests assert on objects, and the logs
	// are there to read when one fails.
	logFile, err := os.CreateTemp("", "trainjob-kueue-integration-*.log")
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration tier: %v\n", err)
		return 1
	}
	defer logFile.Close()
	fmt.Fprintf(os.Stderr, "integration tier: controller logs in %s\n", logFile.Name())
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile), zap.UseDevMode(false), zap.Level(zapLevel())))
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()

	var env *envtest.Environment
	env, err = start(ctx)
	// Stop what started even when start failed half-way: never leave an
	// API server and etcd behind.
	defer func() {
		cancel()
		if env == nil {
			return
		}
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration tier: %v\n", err)
		return 1
	}
	return m.Run()
}

func start(ctx context.Context) (*envtest.Environment, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the integration tier with `make test-integration`, which builds etcd and kube-apiserver from hack/tools")
	}
	crds, err := componentCRDs()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		CRDInstallOptions: envtest.CRDInstallOptions{CRDs: crds},
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	restCfg = cfg
	scheme := testScheme()
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return env, err
	}

	certDir, err := os.MkdirTemp("", "trainjob-kueue-webhook-")
	if err != nil {
		return env, err
	}
	ca, err := localcluster.NewCA("trainjob-kueue-test-ca")
	if err != nil {
		return env, err
	}
	serving, err := ca.Serving("webhooks")
	if err != nil {
		return env, err
	}
	if err := serving.WriteTLS(certDir); err != nil {
		return env, err
	}
	kueuePort, err := freePort()
	if err != nil {
		return env, err
	}
	trainerPort, err := freePort()
	if err != nil {
		return env, err
	}
	jobSetPort, err := freePort()
	if err != nil {
		return env, err
	}
	ourPort, err := freePort()
	if err != nil {
		return env, err
	}
	if err := startKueue(ctx, cfg, kueuePort, certDir); err != nil {
		return env, err
	}
	if err := startTrainer(ctx, cfg, trainerPort, certDir); err != nil {
		return env, err
	}
	if err := startJobSet(ctx, env, jobSetPort, certDir); err != nil {
		return env, err
	}
	for _, p := range []int{kueuePort, trainerPort, jobSetPort} {
		if err := waitForWebhook(ctx, p); err != nil {
			return env, err
		}
	}
	hooks, err := allWebhooks(kueuePort, trainerPort, jobSetPort, ourPort, ca.CertPEM)
	if err != nil {
		return env, err
	}
	var ours []client.Object
	for _, h := range hooks {
		if strings.HasPrefix(h.GetName(), "trainjob-kueue-") {
			ours = append(ours, h)
		} else if err := k8s.Create(ctx, h); err != nil {
			return env, err
		}
	}
	// Kueue's in-tree integration runs first, alone, as on a cluster being
	// switched over to trainjob-kueue.
	if err := runInTreePhase(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "in-tree phase: %v\n", err)
	}
	user, err := env.AddUser(envtest.User{Name: managerUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return env, err
	}
	if err := startTrainJobKueue(ctx, user.Config(), ourPort, certDir); err != nil {
		return env, err
	}
	if err := waitForWebhook(ctx, ourPort); err != nil {
		return env, err
	}
	if err := createAll(ctx, k8s, ours); err != nil {
		return env, err
	}
	return env, nil
}

// zapLevel logs info and up, everything with TEST_VERBOSE.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_VERBOSE") != "" {
		return zapcore.Level(-5)
	}
	return zapcore.InfoLevel
}

func testScheme() *runtime.Scheme {
	s := fixtures.Scheme()
	utilruntime.Must(schedulingv1alpha1.AddToScheme(s))
	return s
}

// componentCRDs are the real CRDs of Kueue, Trainer, JobSet and the
// coscheduling PodGroup, with one change: the TrainJob schema gets fields no
// Go type of ours models, to prove our writes never drop what they don't know.
func componentCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	kueueDir, trainerDir, jobsetDir, err := componentDirs()
	if err != nil {
		return nil, err
	}
	spDir, err := localcluster.ModuleDir("", "sigs.k8s.io/scheduler-plugins")
	if err != nil {
		return nil, err
	}
	kueueCRDs, err := filepath.Glob(filepath.Join(kueueDir, "config/components/crd/bases/*.yaml"))
	if err != nil {
		return nil, err
	}
	files := append(kueueCRDs,
		filepath.Join(trainerDir, "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml"),
		filepath.Join(trainerDir, "manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml"),
		filepath.Join(trainerDir, "manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml"),
		filepath.Join(jobsetDir, "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"),
		filepath.Join(spDir, "config/crd/bases/scheduling.x-k8s.io_podgroups.yaml"),
	)
	crds, err := localcluster.ReadCRDs(files...)
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		if crd.Name == "trainjobs.trainer.kubeflow.org" {
			for i := range crd.Spec.Versions {
				spec := crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"]
				spec.Properties[unmodeledSpecField] = apiextensionsv1.JSONSchemaProps{Type: "string"}
				patches, ok := spec.Properties["runtimePatches"]
				if !ok || patches.Items == nil || patches.Items.Schema == nil {
					return nil, fmt.Errorf("the TrainJob CRD of %s has no spec.runtimePatches list", trainerDir)
				}
				patches.Items.Schema.Properties[unmodeledOverrideField] = apiextensionsv1.JSONSchemaProps{Type: "string"}
				spec.Properties["runtimePatches"] = patches
				crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"] = spec
			}
		}
	}
	return crds, nil
}

// Fields the test adds to the TrainJob CRD; our Go types know neither.
const (
	unmodeledSpecField     = "costCenter"
	unmodeledOverrideField = "comment"
)

// startKueue runs Kueue core (queues, cache, controllers, scheduler) with its
// own batch/job and JobSet integrations on, as batch admins run it for their
// other workloads: trainjob-kueue must coexist with them.
func startKueue(ctx context.Context, cfg *rest.Config, port int, certDir string) error {
	mgr, err := newManager(cfg, testScheme(), port, certDir)
	if err != nil {
		return err
	}
	kcfg, err := discovery.LoadKueueConfig("")
	if err != nil {
		return err
	}
	kcfg.Integrations.Frameworks = kueueFrameworks
	roles := roletracker.NewFakeRoleTracker("leader")
	if err := kueueindexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	cache := schdcache.New(mgr.GetClient(), schdcache.WithRoleTracker(roles))
	requeuer := qcache.NewRequeuer()
	if err := mgr.Add(requeuer); err != nil {
		return err
	}
	// Shared by the queues, the Workload controller and the scheduler, as
	// cmd/kueue wires them.
	preemptions := preemptexpectations.New()
	queues := qcache.NewManager(mgr.GetClient(), cache, requeuer, qcache.WithRoleTracker(roles), qcache.WithPreemptionExpectations(preemptions))
	if name, err := kueuecore.SetupControllers(mgr, queues, cache, &kcfg, kueuecore.SetupControllersOpts{RoleTracker: roles, PreemptionExpectations: preemptions}); err != nil {
		return fmt.Errorf("kueue controller %s: %w", name, err)
	}
	if name, err := kueuewebhooks.Setup(mgr, roles); err != nil {
		return fmt.Errorf("kueue webhook %s: %w", name, err)
	}
	if err := jobframework.SetupIndexes(ctx, mgr.GetFieldIndexer(), jobframework.WithEnabledFrameworks(kcfg.Integrations.Frameworks)); err != nil {
		return err
	}
	dc, err := kdiscovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	version := kubeversion.NewServerVersionFetcher(dc)
	if err := version.FetchServerVersion(); err != nil {
		return err
	}
	if err := jobframework.SetupControllers(ctx, mgr, ctrl.Log.WithName("kueue-jobs"),
		jobframework.WithManageJobsWithoutQueueName(kcfg.ManageJobsWithoutQueueName),
		jobframework.WithManagedJobsNamespaceSelector(labels.Everything()),
		jobframework.WithKubeServerVersion(version),
		jobframework.WithEnabledFrameworks(kcfg.Integrations.Frameworks),
		jobframework.WithManagerName("kueue"),
		jobframework.WithCache(cache),
		jobframework.WithQueues(queues),
		jobframework.WithRoleTracker(roles),
	); err != nil {
		return err
	}
	go queues.CleanUpOnContext(ctx)
	go cache.CleanUpOnContext(ctx)
	if err := mgr.Add(scheduler.New(queues, cache, mgr.GetClient(), mgr.GetEventRecorder("kueue-admission"), scheduler.WithRoleTracker(roles), scheduler.WithPreemptionExpectations(preemptions))); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "kueue manager: %v\n", err)
		}
	}()
	return nil
}

// kueueFrameworks are Kueue's own integrations left on next to ours; the
// in-tree TrainJob one is not among them (docs/install.md, step 1).
var kueueFrameworks = []string{"batch/job", "jobset.x-k8s.io/jobset"}

// startTrainer runs Trainer's controllers and webhooks in one manager
// serving them on a loopback port.
func startTrainer(ctx context.Context, cfg *rest.Config, port int, certDir string) error {
	mgr, err := newManager(cfg, testScheme(), port, certDir)
	if err != nil {
		return err
	}
	// Trainer, at the version this module requires, configured with its
	// defaults as trainer-controller-manager is without a config file.
	var trainerCfg trainerconfig.Configuration
	trainerconfig.SetObjectDefaults_Configuration(&trainerCfg)
	runtimes, err := trainerruntime.New(ctx, mgr.GetClient(), mgr.GetFieldIndexer(), &trainerCfg)
	if err != nil {
		return err
	}
	if name, err := trainercontroller.SetupControllers(mgr, runtimes, controller.Options{}); err != nil {
		return fmt.Errorf("trainer controller %s: %w", name, err)
	}
	if name, err := trainerwebhooks.Setup(mgr, runtimes); err != nil {
		return fmt.Errorf("trainer webhook %s: %w", name, err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "trainer manager: %v\n", err)
		}
	}()
	return nil
}

// startTrainJobKueue runs our integration as its own manager, the way
// cmd/trainjob-kueue wires it, under its own identity.
// unmanagedExcluded is the managedJobsNamespaceSelector trainjob-kueue
// runs with here: namespaces labelled unmanagedLabel=true are not Kueue's.
var unmanagedExcluded = labels.SelectorFromSet(nil).Add(mustRequirement(unmanagedLabel, selection.NotEquals, "true"))

const unmanagedLabel = "integration.trainjob-kueue.dev/unmanaged"

func mustRequirement(key string, op selection.Operator, value string) labels.Requirement {
	r, err := labels.NewRequirement(key, op, []string{value})
	if err != nil {
		panic(err)
	}
	return *r
}

func startTrainJobKueue(ctx context.Context, cfg *rest.Config, port int, certDir string) error {
	scheme := scheme.New()
	// Its caches of Workloads and TrainJobs watch as the manager's do, so
	// every test here reads them through the one-pass watch decoding.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	cacheOpts, err := informercache.Watches(cache.Options{}, cfg, httpClient, scheme, &kueue.Workload{}, &trainjob.TrainJob{})
	if err != nil {
		return err
	}
	mgr, err := newManager(cfg, scheme, port, certDir, func(o *ctrl.Options) { o.Cache = cacheOpts })
	if err != nil {
		return err
	}
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	facts, err := discovery.Discover(ctx, direct, "", "")
	if err != nil {
		return err
	}
	opts := integration.Options{Shared: settings.Shared{
		Shape: facts.Shape,
		Gangs: gang.Schedulers{PodGroupCRD: facts.PodGroups},
		KueueSettings: discovery.KueueSettings{
			ManagedJobsNamespaceSelector: unmanagedExcluded,
			LocalQueueDefaulting:         true,
			// Kueue here runs no MultiKueue controllers; the MultiKueue
			// tests play their part.
			MultiKueue: true,
			// As Kueue v0.19 runs by default (its 30-minute timeout
			// outlasts every test here): Workloads carry the PodsReady
			// condition.
			WaitForPodsReady: true,
		},
		ManagerUsername: managerUser,
	},
		// Pods never run here: every started gang waits, and is retried.
		GangRetryInterval: 2 * time.Second,
		// A start refused by an admission policy is tried again soon.
		PolicyRetry: 2 * time.Second,
	}
	opts.PodSets.Defaulter = facts.Defaulter
	recorder, err := integration.NewEventRecorder(mgr)
	if err != nil {
		return err
	}
	opts.Recorder = countingRecorder{EventRecorder: recorder, counter: ourEvents}
	// As cmd/trainjob-kueue's controllers list sets them up for this mode.
	rec := integration.NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), opts.Recorder, opts)
	workers := multikueue.NewWorkerClients(mgr.GetAPIReader(), mgr.GetScheme(), opts.KueueNamespace)
	setups := []func(ctrl.Manager) error{
		func(m ctrl.Manager) error { return integration.SetupIndexes(ctx, m.GetFieldIndexer()) },
		rec.SetupWithManager,
		multikueue.NewNameClashes(mgr.GetClient(), opts.Recorder).SetupWithManager,
		multikueue.NewWorkerRefusals(mgr.GetClient(), workers, opts.Recorder, opts.MultiKueueOrigin).SetupWithManager,
		func(m ctrl.Manager) error { return tjwebhook.Setup(m, opts.Shared) },
		tjwebhook.SetupJobSets,
		tjwebhook.SetupJobs,
		tjwebhook.SetupPods,
	}
	if opts.Gangs.PodGroupCRD {
		setups = append(setups, integration.NewGangKeeper(mgr.GetClient(), rec, opts).SetupWithManager)
	}
	for _, setup := range setups {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "trainjob-kueue manager: %v\n", err)
		}
	}()
	return nil
}

// kueueWebhook keeps Kueue's core webhooks and those of the integrations
// it runs; the others would answer 404 and, failing closed, block pods.
func kueueWebhook(path string) bool {
	return strings.Contains(path, "-kueue-x-k8s-io-") || strings.HasSuffix(path, "-batch-v1-job") || strings.HasSuffix(path, "-jobset-x-k8s-io-v1alpha2-jobset")
}

// allWebhooks registers every component's webhooks against the loopback
// servers: Kueue's core ones and those of the integrations it runs, JobSet's
// and Trainer's, and ours from config/.
func allWebhooks(kueuePort, trainerPort, jobSetPort, ourPort int, ca []byte) ([]client.Object, error) {
	kueueDir, trainerDir, jobsetDir, err := componentDirs()
	if err != nil {
		return nil, err
	}
	kueueURL := fmt.Sprintf("https://127.0.0.1:%d", kueuePort)
	trainerURL := fmt.Sprintf("https://127.0.0.1:%d", trainerPort)
	jobSetURL := fmt.Sprintf("https://127.0.0.1:%d", jobSetPort)
	ours := fmt.Sprintf("https://127.0.0.1:%d", ourPort)
	var objs []client.Object
	for _, src := range []struct {
		file, prefix, url string
		keep              func(string) bool
	}{
		{filepath.Join(kueueDir, "config/components/webhook/manifests.yaml"), "kueue", kueueURL, kueueWebhook},
		{filepath.Join(jobsetDir, "config/components/webhook/manifests.yaml"), "jobset", jobSetURL, func(p string) bool { return strings.Contains(p, "jobset") }},
		{filepath.Join(trainerDir, "manifests/base/webhook/manifests.yaml"), "trainer", trainerURL, localcluster.All},
		{filepath.Join("..", "..", "config/webhook/manifests.yaml"), "trainjob-kueue", ours, localcluster.All},
	} {
		o, err := localcluster.WebhookConfigs(src.file, src.prefix, src.url, ca, src.keep)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// newManager is a manager of this test process: no metrics or probes, its
// webhooks (if any) served on a loopback port. Several run side by side,
// hence no controller name validation.
func newManager(cfg *rest.Config, scheme *runtime.Scheme, port int, certDir string, with ...func(*ctrl.Options)) (ctrl.Manager, error) {
	opts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	}
	if port != 0 {
		opts.WebhookServer = webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: certDir})
	}
	for _, w := range with {
		w(&opts)
	}
	return ctrl.NewManager(cfg, opts)
}

// componentDirs are where the module cache holds Kueue, Trainer and JobSet
// at the versions this module requires.
func componentDirs() (kueue, trainer, jobset string, err error) {
	if kueue, err = localcluster.ModuleDir("", "sigs.k8s.io/kueue"); err != nil {
		return
	}
	if trainer, err = localcluster.ModuleDir("", "github.com/kubeflow/trainer/v2"); err != nil {
		return
	}
	jobset, err = localcluster.ModuleDir("", "sigs.k8s.io/jobset")
	return
}

// ourEvents counts the events trainjob-kueue records, as it records them.
// The API server cannot tell: the recorder's correlator writes an event seen
// again as a count on the first, and combines more than ten alike within
// ten minutes into one, so a job retried in a loop shows there as one
// event.
var ourEvents = &eventCounter{counts: map[eventKey]int{}}

type eventKey struct{ namespace, name, reason string }

type eventCounter struct {
	mu     sync.Mutex
	counts map[eventKey]int
}

func (c *eventCounter) add(obj metav1.Object, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[eventKey{obj.GetNamespace(), obj.GetName(), reason}]++
}

// count is how many times an event of reason was recorded on obj.
func (c *eventCounter) count(obj client.Object, reason string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[eventKey{obj.GetNamespace(), obj.GetName(), reason}]
}

type countingRecorder struct {
	events.EventRecorder
	counter *eventCounter
}

func (r countingRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if o, ok := regarding.(metav1.Object); ok {
		r.counter.add(o, reason)
	}
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}
