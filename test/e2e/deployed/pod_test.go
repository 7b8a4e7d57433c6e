package deployed_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// image is how the image runs its process (hack/tools/image unpack).
type image struct {
	Root       string   `json:"root"`
	Entrypoint []string `json:"entrypoint"`
	Cmd        []string `json:"cmd"`
	Env        []string `json:"env"`
	User       string   `json:"user"`
	WorkingDir string   `json:"workingDir"`
}

// deployment plays the shipped Deployment on this host: what kubelet, the
// ReplicaSet and the EndpointSlice controller would do for its pods, done
// by the test for processes.
type deployment struct {
	dir       string
	img       *image
	api       apiServerAddr
	namespace string
	pod       corev1.PodSpec
	container corev1.Container
	// service fronts the webhooks (the shipped webhook configurations'
	// clientConfig.service).
	service *corev1.Service
	// hostIP is where the API server reaches the replicas (they listen on
	// every interface, as shipped).
	hostIP string

	mu   sync.Mutex
	seq  int
	pods []*pod
}

func newDeployment(dir string, img *image, objs []*unstructured.Unstructured, api apiServerAddr) (*deployment, error) {
	ip, err := localcluster.HostIP()
	if err != nil {
		return nil, err
	}
	d := &deployment{dir: dir, img: img, api: api, hostIP: ip}
	var serviceName, serviceNS string
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			var dp appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &dp); err != nil {
				return nil, err
			}
			d.namespace, d.pod = dp.Namespace, dp.Spec.Template.Spec
			for _, c := range dp.Spec.Template.Spec.Containers {
				if c.Name == "manager" {
					d.container = c
				}
			}
		case "MutatingWebhookConfiguration":
			hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			for _, h := range hooks {
				m, _ := h.(map[string]any)
				serviceName, _, _ = unstructured.NestedString(m, "clientConfig", "service", "name")
				serviceNS, _, _ = unstructured.NestedString(m, "clientConfig", "service", "namespace")
			}
		}
	}
	if d.container.Name == "" {
		return nil, errors.New("the rendered install has no Deployment with a manager container")
	}
	for _, o := range objs {
		if o.GetKind() == "Service" && o.GetName() == serviceName && o.GetNamespace() == serviceNS {
			d.service = &corev1.Service{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d.service); err != nil {
				return nil, err
			}
		}
	}
	if d.service == nil {
		return nil, fmt.Errorf("the rendered install has no Service %s/%s the webhooks name", serviceNS, serviceName)
	}
	return d, nil
}

// Upgrade takes the Deployment's template from a new rendering, as a
// changed Deployment does: replicas started from now on run it, those
// running keep theirs until they are replaced.
func (d *deployment) Upgrade(objs []*unstructured.Unstructured) error {
	next, err := newDeployment(d.dir, d.img, objs, d.api)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pod, d.container = next.pod, next.container
	return nil
}

// pod is one replica: the image's binary running chrooted in its own root,
// where its volumes are.
type pod struct {
	// seq is its place among the Deployment's pods (1, 2, …).
	seq  int
	name string
	dir  string
	// image is the template's image the replica was started from.
	image string
	// hostPorts: the container's ports (and its probes') as this host
	// gives them to this replica.
	hostPorts map[int32]int32
	cmd       *exec.Cmd
	exited    chan struct{}
	// stopKubelet ends the volume sync and the readiness probe.
	stopKubelet chan struct{}
	kubelet     sync.WaitGroup

	mu       sync.Mutex
	ready    bool
	deleting bool
}

func (p *pod) logFile() string { return filepath.Join(p.dir, "manager.log") }

// Ready is the pod's readiness as its readiness probe last said.
func (p *pod) Ready() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready && !p.deleting
}

// Running: the process has not exited.
func (p *pod) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// leaseAcquired is what controller-runtime's leader election logs when
// this replica becomes the leader.
var leaseAcquired = regexp.MustCompile(`(?i)successfully acquired lease`)

// Leads: the replica logged that it acquired the leader lease.
func (p *pod) Leads() bool {
	data, _ := os.ReadFile(p.logFile())
	return leaseAcquired.Match(data)
}

// Live is the deployment's pods not being deleted.
func (d *deployment) Live() []*pod {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*pod
	for _, p := range d.pods {
		p.mu.Lock()
		deleting := p.deleting
		p.mu.Unlock()
		if !deleting && p.Running() {
			out = append(out, p)
		}
	}
	return out
}

// Start creates a replica as the ReplicaSet and kubelet would: its
// volumes, a token of the pod's ServiceAccount, its EndpointSlice (not
// ready until its readiness probe passes), then the container's process.
func (d *deployment) Start() (*pod, error) {
	d.mu.Lock()
	d.seq++
	p := &pod{seq: d.seq, name: fmt.Sprintf("%s-%d", d.container.Name, d.seq), image: d.container.Image, exited: make(chan struct{}), stopKubelet: make(chan struct{}), hostPorts: map[int32]int32{}}
	d.pods = append(d.pods, p)
	d.mu.Unlock()
	p.dir = filepath.Join(d.dir, "pods", p.name)
	root := filepath.Join(p.dir, "root")
	if err := linkTree(d.img.Root, root); err != nil {
		return nil, err
	}
	for _, port := range d.containerPorts() {
		free, err := freePort()
		if err != nil {
			return nil, err
		}
		p.hostPorts[port] = free
	}
	if err := d.mountVolumes(p, root); err != nil {
		return nil, err
	}
	if err := d.mountServiceAccount(root); err != nil {
		return nil, err
	}
	if err := d.publish(p, false); err != nil {
		return nil, err
	}
	argv, err := d.argv(p)
	if err != nil {
		return nil, err
	}
	env, err := d.env()
	if err != nil {
		return nil, err
	}
	uid, gid, err := d.user()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(p.logFile())
	if err != nil {
		return nil, err
	}
	defer log.Close()
	fmt.Fprintf(log, "# %s\n", strings.Join(argv, " "))
	p.cmd = &exec.Cmd{Path: argv[0], Args: argv, Env: env, Dir: cmpOr(d.img.WorkingDir, "/"), Stdout: log, Stderr: log,
		SysProcAttr: &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}, Setpgid: true}}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", p.name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	p.kubelet.Add(1)
	go d.probeReadiness(p)
	return p, nil
}

// Delete deletes a replica's pod the way Kubernetes does: its endpoint
// turns terminating (so the API server stops sending it calls) and the
// container gets SIGTERM at the same moment, SIGKILL after the grace
// period; the pod and its endpoint are gone once it exited.
func (d *deployment) Delete(p *pod) error {
	p.mu.Lock()
	p.deleting = true
	p.mu.Unlock()
	if err := d.publish(p, false); err != nil {
		return err
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	grace := time.Duration(ptr.Deref(d.pod.TerminationGracePeriodSeconds, corev1.DefaultTerminationGracePeriodSeconds)) * time.Second
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
	close(p.stopKubelet)
	p.kubelet.Wait()
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: d.service.Namespace, Name: d.sliceName(p)}}
	if err := k8s.Delete(ctx, slice); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// Crash kills a replica's container with SIGKILL, as the OOM killer does:
// nothing is published first, so the API server keeps sending it calls
// until its readiness probe has failed failureThreshold times and its
// endpoint turns not ready. It then goes as a deleted pod does (its
// ReplicaSet replaces it; a restart in place would be the same process
// again). It returns when the endpoint was published not ready: how long
// the API server could still route calls to it.
func (d *deployment) Crash(p *pod) (time.Duration, error) {
	killed := time.Now()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
	probe := d.container.ReadinessProbe
	detect := time.Duration(cmpOr(probe.PeriodSeconds, 10)*cmpOr(probe.FailureThreshold, 3)+cmpOr(probe.TimeoutSeconds, 1)) * time.Second
	for deadline := killed.Add(detect + 5*time.Second); ; {
		p.mu.Lock()
		ready := p.ready
		p.mu.Unlock()
		if !ready {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s killed %s ago, its endpoint still ready", p.name, time.Since(killed).Round(time.Second))
		}
		time.Sleep(100 * time.Millisecond)
	}
	unready := time.Since(killed)
	p.mu.Lock()
	p.deleting = true
	p.mu.Unlock()
	close(p.stopKubelet)
	p.kubelet.Wait()
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: d.service.Namespace, Name: d.sliceName(p)}}
	if err := k8s.Delete(ctx, slice); err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	return unready, nil
}

func (d *deployment) stopAll() {
	for _, p := range d.Live() {
		if err := d.Delete(p); err != nil {
			fmt.Fprintf(os.Stderr, "deployed: deleting %s: %v\n", p.name, err)
		}
	}
}

// containerPorts are the ports the container listens on: its declared
// ports and its probes'.
func (d *deployment) containerPorts() []int32 {
	seen := map[int32]bool{}
	var out []int32
	add := func(p int32) {
		if p != 0 && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, cp := range d.container.Ports {
		add(cp.ContainerPort)
	}
	for _, probe := range []*corev1.Probe{d.container.ReadinessProbe, d.container.LivenessProbe} {
		if probe != nil && probe.HTTPGet != nil {
			add(d.portNumber(probe.HTTPGet.Port))
		}
	}
	return out
}

// portNumber resolves a named container port.
func (d *deployment) portNumber(port intstr.IntOrString) int32 {
	if port.Type == intstr.Int {
		return port.IntVal
	}
	for _, cp := range d.container.Ports {
		if cp.Name == port.StrVal {
			return cp.ContainerPort
		}
	}
	return 0
}

// portArg is a listen address flag's value ending in a port.
var portArg = regexp.MustCompile(`^(--?[a-z0-9-]+=[^=]*:)(\d+)$`)

// argv is the container's command line with its ports moved to this
// replica's host ports — the one change from the shipped args. A
// declared container port that no arg names is the binary's default
// (the webhook server's 9443): it is set with the flag the binary has
// for it.
func (d *deployment) argv(p *pod) ([]string, error) {
	cmd := d.container.Command
	if len(cmd) == 0 {
		cmd = d.img.Entrypoint
	}
	args := d.container.Args
	if len(args) == 0 && len(d.container.Command) == 0 {
		args = d.img.Cmd
	}
	if len(cmd) == 0 {
		return nil, errors.New("neither the container nor the image names a command")
	}
	named := map[int32]bool{}
	var out []string
	for _, a := range args {
		if m := portArg.FindStringSubmatch(a); m != nil {
			n, _ := strconv.Atoi(m[2])
			if host, ok := p.hostPorts[int32(n)]; ok {
				named[int32(n)] = true
				a = fmt.Sprintf("%s%d", m[1], host)
			}
		}
		out = append(out, a)
	}
	for _, cp := range d.container.Ports {
		if named[cp.ContainerPort] {
			continue
		}
		if cp.Name != "webhook-server" {
			return nil, fmt.Errorf("container port %s (%d) is set by no arg, and this test knows no flag for it", cp.Name, cp.ContainerPort)
		}
		out = append(out, fmt.Sprintf("--webhook-port=%d", p.hostPorts[cp.ContainerPort]))
	}
	return append(append([]string{}, cmd...), out...), nil
}

// env is the image's environment, what kubelet adds (where the API
// server is) and the container's, resolved.
func (d *deployment) env() ([]string, error) {
	env := append([]string{}, d.img.Env...)
	env = append(env, "KUBERNETES_SERVICE_HOST="+d.api.host, "KUBERNETES_SERVICE_PORT="+d.api.port)
	for _, e := range d.container.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, e.Name+"="+d.namespace)
		default:
			return nil, fmt.Errorf("env %s: this test resolves only metadata.namespace field references", e.Name)
		}
	}
	return env, nil
}

// user is the container's user: its securityContext's, else the image's.
func (d *deployment) user() (uint32, uint32, error) {
	if sc := d.container.SecurityContext; sc != nil && sc.RunAsUser != nil {
		return uint32(*sc.RunAsUser), uint32(ptr.Deref(sc.RunAsGroup, *sc.RunAsUser)), nil
	}
	uid, gid, _ := strings.Cut(d.img.User, ":")
	u, err := strconv.ParseUint(uid, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("the image's user %q is not numeric: %w", d.img.User, err)
	}
	if gid == "" {
		gid = uid
	}
	g, err := strconv.ParseUint(gid, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("the image's group %q is not numeric: %w", d.img.User, err)
	}
	if d.pod.SecurityContext != nil && ptr.Deref(d.pod.SecurityContext.RunAsNonRoot, false) && u == 0 {
		return 0, 0, errors.New("runAsNonRoot, and the image runs as root")
	}
	return uint32(u), uint32(g), nil
}

// mountVolumes projects the pod's ConfigMap and Secret volumes into its
// root at their mount paths, and keeps them in sync as kubelet does (the
// internal certificate management writes the Secret; an admin edits
// Kueue's Configuration in its ConfigMap; the replica reads the files).
func (d *deployment) mountVolumes(p *pod, root string) error {
	for _, m := range d.container.VolumeMounts {
		var vol *corev1.Volume
		for i := range d.pod.Volumes {
			if d.pod.Volumes[i].Name == m.Name {
				vol = &d.pod.Volumes[i]
			}
		}
		if vol == nil {
			return fmt.Errorf("volume mount %s names no volume", m.Name)
		}
		dir := filepath.Join(root, m.MountPath)
		switch {
		case vol.ConfigMap != nil:
			if err := keepSynced(p, dir, client.ObjectKey{Namespace: d.namespace, Name: vol.ConfigMap.Name}, syncConfigMap); err != nil {
				return fmt.Errorf("volume %s: %w", m.Name, err)
			}
		case vol.Secret != nil:
			if err := keepSynced(p, dir, client.ObjectKey{Namespace: d.namespace, Name: vol.Secret.SecretName}, syncSecret); err != nil {
				return fmt.Errorf("volume %s: %w", m.Name, err)
			}
		default:
			return fmt.Errorf("volume %s: this test mounts ConfigMaps and Secrets only", m.Name)
		}
	}
	return nil
}

// volumeSyncPeriod: how soon a changed Secret or ConfigMap reaches a
// replica's files. kubelet takes up to its sync period plus its cache's
// TTL, about a minute, at a moment of each pod's own; shorter here only
// makes the tests quicker. Each replica syncs at an offset of its own
// (its sequence number, in seconds, modulo the period), as two pods on
// two nodes would: an edit reaches them at different moments.
const volumeSyncPeriod = 4 * time.Second

// keepSynced projects the object at key into dir now, and again at each
// of the pod's ticks while its kubelet runs, whenever sync finds it
// changed.
func keepSynced(p *pod, dir string, key client.ObjectKey, sync func(string, client.ObjectKey, string) (string, error)) error {
	rv, err := sync(dir, key, "")
	if err != nil {
		return err
	}
	offset := time.Duration(p.seq%int(volumeSyncPeriod/time.Second)) * time.Second
	p.kubelet.Add(1)
	go func() {
		defer p.kubelet.Done()
		wait := offset
		for {
			select {
			case <-p.stopKubelet:
				return
			case <-time.After(wait):
			}
			wait = volumeSyncPeriod
			if next, err := sync(dir, key, rv); err == nil {
				rv = next
			}
		}
	}()
	return nil
}

// syncConfigMap projects the ConfigMap into dir unless it is still at
// resourceVersion rv, and returns the version it projected.
func syncConfigMap(dir string, key client.ObjectKey, rv string) (string, error) {
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, key, cm); err != nil {
		return rv, err
	}
	if cm.ResourceVersion == rv {
		return rv, nil
	}
	files := map[string][]byte{}
	for k, v := range cm.Data {
		files[k] = []byte(v)
	}
	return cm.ResourceVersion, project(dir, files)
}

// syncSecret projects the Secret into dir unless it is still at
// resourceVersion rv, and returns the version it projected.
func syncSecret(dir string, key client.ObjectKey, rv string) (string, error) {
	s := &corev1.Secret{}
	if err := k8s.Get(ctx, key, s); err != nil {
		return rv, err
	}
	if s.ResourceVersion == rv {
		return rv, nil
	}
	return s.ResourceVersion, project(dir, s.Data)
}

// project writes files into dir the way kubelet's atomic writer does: a
// fresh timestamped directory, the ..data symlink swapped to it in one
// rename, and each file a symlink through ..data, so a reader never sees
// a new certificate with an old key.
func project(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ts := fmt.Sprintf("..%d", time.Now().UnixNano())
	if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, ts, name), data, 0o644); err != nil {
			return err
		}
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(ts, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		return err
	}
	for name := range files {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
			return err
		}
	}
	if old != "" {
		return os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}

// serviceAccountDir is where kubelet mounts the pod's API credentials.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// mountServiceAccount writes a token of the pod's ServiceAccount
// (TokenRequest), the API server's CA and the namespace where in-cluster
// clients look for them.
func (d *deployment) mountServiceAccount(root string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: d.namespace, Name: d.pod.ServiceAccountName}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := k8s.SubResource("token").Create(ctx, sa, tr); err != nil {
		return fmt.Errorf("a token for ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	return project(filepath.Join(root, serviceAccountDir), map[string][]byte{
		"token": []byte(tr.Status.Token), "ca.crt": d.api.ca, "namespace": []byte(d.namespace),
	})
}

// sliceName is the EndpointSlice of the webhook Service for one replica.
func (d *deployment) sliceName(p *pod) string { return d.service.Name + "-" + p.name }

// publish writes the replica's EndpointSlice of the webhook Service: the
// Service's port resolved to the container port its targetPort names, as
// this host gives it to the replica, ready as the pod is.
func (d *deployment) publish(p *pod, ready bool) error {
	sp := d.service.Spec.Ports[0]
	host := p.hostPorts[d.portNumber(sp.TargetPort)]
	if host == 0 {
		return fmt.Errorf("the Service's targetPort %s is no port of the container", sp.TargetPort.String())
	}
	p.mu.Lock()
	deleting := p.deleting
	p.mu.Unlock()
	slice := localcluster.HostEndpointSlice(d.service.Namespace, d.sliceName(p), d.service.Name, sp.Name, d.hostIP, host, ready && !deleting, deleting)
	slice.SetGroupVersionKind(discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"))
	return k8s.Patch(ctx, slice, client.Apply, client.FieldOwner("e2e-deployed"), client.ForceOwnership)
}

// probeReadiness runs the container's readiness probe as kubelet does
// (initial delay, period, failure threshold) and keeps the replica's
// endpoint's Ready condition in line with it.
func (d *deployment) probeReadiness(p *pod) {
	defer p.kubelet.Done()
	probe := d.container.ReadinessProbe
	delay := time.Duration(probe.InitialDelaySeconds) * time.Second
	period := time.Duration(cmpOr(probe.PeriodSeconds, 10)) * time.Second
	failures, threshold := 0, int(cmpOr(probe.FailureThreshold, 3))
	url := fmt.Sprintf("http://127.0.0.1:%d%s", p.hostPorts[d.portNumber(probe.HTTPGet.Port)], probe.HTTPGet.Path)
	hc := &http.Client{Timeout: time.Duration(cmpOr(probe.TimeoutSeconds, 1)) * time.Second}
	wait := delay
	for {
		select {
		case <-p.stopKubelet:
			return
		case <-time.After(wait):
		}
		wait = period
		ok := false
		if resp, err := hc.Get(url); err == nil {
			ok = resp.StatusCode >= 200 && resp.StatusCode < 400
			resp.Body.Close()
		}
		p.mu.Lock()
		was, deleting := p.ready, p.deleting
		switch {
		case ok:
			p.ready, failures = true, 0
		default:
			failures++
			if failures >= threshold {
				p.ready = false
			}
		}
		now := p.ready
		p.mu.Unlock()
		if now != was && !deleting {
			if err := d.publish(p, now); err != nil {
				fmt.Fprintf(os.Stderr, "deployed: publishing %s's endpoint: %v\n", p.name, err)
			}
		}
	}
}

// linkTree hard-links the image's file system into a pod's root.
func linkTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if e.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		return os.Link(path, dst)
	})
}

// freePort is a host port for a replica's container port, chosen where no
// outbound connection can take it before the replica binds it.
func freePort() (int32, error) {
	p, err := localcluster.FreePort()
	return int32(p), err
}

func cmpOr[T comparable](v, fallback T) T {
	var zero T
	if v == zero {
		return fallback
	}
	return v
}

// tail is the end of a replica's log, for failure messages.
func (p *pod) tail() string {
	data, _ := os.ReadFile(p.logFile())
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
