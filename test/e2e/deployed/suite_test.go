// Package deployed runs trainjob-kueue exactly as it ships: config/default
// (or, with DEPLOYED_FROM=helm, the Helm chart with its defaults) rendered
// and applied to a local control plane that runs no trainjob-kueue
// of its own, and the Deployment's two replicas played on this host by the
// binary unpacked from the built image, each in a root of its own holding
// the pod's volumes, as the image's user, with the container's args and env
// (only ports moved, so two replicas share one host), authenticated with a
// token of the shipped ServiceAccount — RBAC is the shipped RBAC — and
// certificates managed internally into the shipped Secret. kube-apiserver
// reaches the shipped webhook Service through EndpointSlices this package
// keeps as the EndpointSlice controller would from the replicas' readiness
// probes (see pod_test.go for what stands in for kubelet).
package deployed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

var (
	ctx = context.Background()
	k8s client.Client
	// release renders and applies the install (an upgrade renders again).
	release *installer
	// dep is the shipped Deployment as this host plays it.
	dep *deployment
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if os.Geteuid() != 0 {
		// Each replica runs in a root of its own (chroot) as the image's
		// user, which takes root to set up.
		fmt.Fprintln(os.Stderr, "deployed: this tier runs the image's binary chrooted as the image's user and must run as root")
		return 1
	}
	o := localcluster.ForTests("e2e-deployed", localcluster.Options{Root: root,
		Settings: localcluster.Settings{Integration: localcluster.IntegrationNone, EndpointRouting: true}})
	c, down, err := localcluster.UpForTests(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "deployed: %v\n", err)
		return 1
	}
	defer down()
	if k8s, err = c.Client(fixtures.Scheme()); err != nil {
		fmt.Fprintf(os.Stderr, "deployed: %v\n", err)
		return 1
	}
	dep, err = ship(root, c)
	if err != nil {
		fmt.Fprintf(os.Stderr, "deployed: %v\n", err)
		return 1
	}
	defer dep.stopAll()
	return m.Run()
}

// ship builds the image, unpacks this host's platform of it, renders
// config/default with it and applies the result, as `make image` and
// `make deploy` do.
func ship(root string, c *localcluster.Cluster) (*deployment, error) {
	work := filepath.Join(c.Dir, "deployed")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	imageTool := filepath.Join(root, "hack", "tools", "image")
	layout := filepath.Join(work, "image")
	platform := "linux/" + runtime.GOARCH
	fmt.Fprintf(os.Stderr, "deployed: building the image for %s\n", platform)
	if _, err := goRun(imageTool, "build", "-root", root, "-out", layout, "-platforms", platform); err != nil {
		return nil, err
	}
	rootfs := filepath.Join(work, "rootfs")
	out, err := goRun(imageTool, "unpack", "-layout", layout, "-platform", platform, "-root", rootfs)
	if err != nil {
		return nil, err
	}
	img := &image{}
	if err := json.Unmarshal(out, img); err != nil {
		return nil, fmt.Errorf("the image's settings %q: %w", out, err)
	}
	release = &installer{root: root, work: work}
	objs, err := release.render("trainjob-kueue:e2e-deployed")
	if err != nil {
		return nil, err
	}
	if err := release.apply(objs); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return newDeployment(work, img, objs, apiServer(cfg))
}

// installer renders and applies the install as `make deploy` or `helm
// install`/`helm upgrade` do, from config/default or the chart
// (DEPLOYED_FROM).
type installer struct{ root, work string }

// render renders the install for the image ref.
func (i *installer) render(ref string) ([]*unstructured.Unstructured, error) {
	imageTool := filepath.Join(i.root, "hack", "tools", "image")
	rendered := filepath.Join(i.work, "deploy.yaml")
	switch from := os.Getenv("DEPLOYED_FROM"); from {
	case "", "kustomize":
		fmt.Fprintf(os.Stderr, "deployed: rendering config/default (make deploy) for %s\n", ref)
		if _, err := goRun(imageTool, "./render", "-config", filepath.Join(i.root, "config", "default"), "-image", ref, "-o", rendered); err != nil {
			return nil, err
		}
	case "helm":
		// The chart with its default values, as `helm install -n
		// trainjob-kueue-system --create-namespace` renders it;
		// DEPLOYED_HELM_SET: comma-separated KEY=VALUE on top of them.
		args := []string{"./helmrender", "-chart", filepath.Join(i.root, "charts", "trainjob-kueue"), "-image", ref, "-o", rendered}
		for kv := range strings.SplitSeq(os.Getenv("DEPLOYED_HELM_SET"), ",") {
			if kv != "" {
				args = append(args, "-set", kv)
			}
		}
		fmt.Fprintf(os.Stderr, "deployed: rendering the Helm chart with its defaults, and %v\n", args[7:])
		if _, err := goRun(filepath.Join(i.root, "test", "install"), args...); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("DEPLOYED_FROM=%q: kustomize (config/default) or helm (the chart)", from)
	}
	return readObjects(rendered)
}

// apply applies a rendering over what is installed, with one field owner
// as helm and kubectl apply keep one.
func (i *installer) apply(objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if err := k8s.Patch(ctx, o, client.Apply, client.FieldOwner("e2e-deployed"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// goRun runs `go run . ARGS` (or the package in args[0] when it starts
// with ./) in the module at dir and returns its standard output.
func goRun(dir string, args ...string) ([]byte, error) {
	pkg := "."
	if strings.HasPrefix(args[0], "./") {
		pkg, args = args[0], args[1:]
	}
	cmd := exec.Command("go", append([]string{"run", pkg}, args...)...)
	cmd.Dir = dir
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go run %s %s (in %s): %w", pkg, strings.Join(args, " "), dir, err)
	}
	return stdout.Bytes(), nil
}

// readObjects reads a multi-document YAML file.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	docs, err := localcluster.ReadDocs(path)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(d, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs, nil
}

// apiServer is where pods reach the API server: its host and port, as
// kubelet puts them in KUBERNETES_SERVICE_HOST and _PORT, and its CA.
type apiServerAddr struct {
	host, port string
	ca         []byte
}

func apiServer(cfg *rest.Config) apiServerAddr {
	hostport := strings.TrimPrefix(cfg.Host, "https://")
	i := strings.LastIndex(hostport, ":")
	return apiServerAddr{host: hostport[:i], port: hostport[i+1:], ca: cfg.CAData}
}
