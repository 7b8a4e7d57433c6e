package deployed_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// Names config/default ships.
const (
	leaseName  = "trainjob-kueue.dev"
	mutating   = "trainjob-kueue-mutating-webhook-configuration"
	validating = "trainjob-kueue-validating-webhook-configuration"
)

// readyWithin: how soon a replica must be Ready.
const readyWithin = time.Minute

// takeoverSlack: how much longer than the lease duration a standby may
// take to lead: up to two retry periods of 2 s to observe the lease and
// take it, and a few seconds for a loaded machine.
const takeoverSlack = 8 * time.Second

// twoReady makes sure the Deployment runs its two replicas, starting what
// is missing, and waits until both are Ready.
func twoReady(t *testing.T) []*pod {
	t.Helper()
	for len(dep.Live()) < 2 {
		if _, err := dep.Start(); err != nil {
			t.Fatal(err)
		}
	}
	pods := dep.Live()
	waitReady(t, pods...)
	return pods
}

func waitReady(t *testing.T, pods ...*pod) {
	t.Helper()
	start := time.Now()
	for _, p := range pods {
		eventually(t, readyWithin-time.Since(start), p.name+" Ready", func() error {
			if !p.Running() {
				t.Fatalf("%s exited:\n%s", p.name, p.tail())
			}
			if !p.Ready() {
				return fmt.Errorf("%s not Ready:\n%s", p.name, p.tail())
			}
			return nil
		})
	}
	t.Logf("%d replica(s) Ready %s after the wait began", len(pods), time.Since(start).Round(time.Second))
}

// secret is the shipped webhook certificate Secret.
func secret(t *testing.T) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: dep.namespace, Name: dep.pod.Volumes[certVolume(t)].Secret.SecretName}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func certVolume(t *testing.T) int {
	t.Helper()
	for i, v := range dep.pod.Volumes {
		if v.Secret != nil {
			return i
		}
	}
	t.Fatal("the Deployment mounts no Secret")
	return -1
}

// servedCert is the certificate a replica's webhook server presents,
// verified as kube-apiserver verifies it: against the caBundle, for the
// Service's DNS name.
func servedCert(p *pod, caBundle []byte) (*x509.Certificate, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caBundle) {
		return nil, errors.New("the caBundle holds no certificate")
	}
	port := p.hostPorts[dep.portNumber(dep.service.Spec.Ports[0].TargetPort)]
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{
		RootCAs: roots, ServerName: fmt.Sprintf("%s.%s.svc", dep.service.Name, dep.service.Namespace), MinVersion: tls.VersionTLS12,
	})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

func caBundles(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	mw := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: mutating}, mw); err != nil {
		t.Fatal(err)
	}
	for _, w := range mw.Webhooks {
		out[mutating+"/"+w.Name] = w.ClientConfig.CABundle
	}
	vw := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: validating}, vw); err != nil {
		t.Fatal(err)
	}
	for _, w := range vw.Webhooks {
		out[validating+"/"+w.Name] = w.ClientConfig.CABundle
	}
	return out
}

// leader is the replica that logged acquiring the lease; it fails t when
// more than one live replica did.
func leader(t *testing.T, pods []*pod) *pod {
	t.Helper()
	var l *pod
	eventually(t, 30*time.Second, "one leader", func() error {
		var leaders []string
		l = nil
		for _, p := range pods {
			if p.Leads() {
				leaders = append(leaders, p.name)
				l = p
			}
		}
		if len(leaders) != 1 {
			return fmt.Errorf("replicas that acquired the lease: %v", leaders)
		}
		return nil
	})
	return l
}

func pemCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatalf("no PEM certificate in %q", data)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Both replicas of config/default become Ready within a minute with the
// certificate their own rotators generated into the shipped Secret: its CA
// is in every shipped webhook's caBundle, each replica serves it for the
// Service's name, one replica leads, and queued jobs run to completion
// through the shipped webhooks and RBAC.
func TestBothReplicasReadyWithInternalCertificates(t *testing.T) {
	pods := twoReady(t)
	s := secret(t)
	for _, k := range []string{"ca.crt", "tls.crt", "tls.key"} {
		if len(s.Data[k]) == 0 {
			t.Fatalf("the Secret %s has no %s", s.Name, k)
		}
	}
	bundles := caBundles(t)
	if len(bundles) == 0 {
		t.Fatal("the shipped webhook configurations hold no webhook")
	}
	for name, b := range bundles {
		if !bytes.Equal(b, s.Data["ca.crt"]) {
			t.Errorf("webhook %s: caBundle is not the Secret's CA", name)
		}
	}
	want := pemCert(t, s.Data["tls.crt"])
	for _, p := range pods {
		got, err := servedCert(p, s.Data["ca.crt"])
		if err != nil {
			t.Fatalf("%s's webhook certificate: %v", p.name, err)
		}
		if !got.Equal(want) {
			t.Errorf("%s serves certificate %s, the Secret holds %s", p.name, got.SerialNumber, want.SerialNumber)
		}
	}
	leader(t, pods)

	ns, lq := setUp(t)
	jobs := submit(t, ns, lq, "job", 2)
	allCompleteOnce(t, ns, jobs, 2*time.Minute)
}

// burst is a burst of jobs part-admitted under two ready replicas: the
// leader about to be taken away, and the standby that must take over.
type burst struct {
	ns, lq          string
	probe           *webhookProbe
	jobs            []*trainer.TrainJob
	leader, standby *pod
	leaseDuration   time.Duration
}

// midBurst submits n jobs named prefix-<i> under two ready replicas, a
// webhook probe running, and returns once some are admitted.
func midBurst(t *testing.T, prefix string, n int) *burst {
	t.Helper()
	pods := twoReady(t)
	b := &burst{}
	b.ns, b.lq = setUp(t)
	b.probe = startWebhookProbe(b.ns, b.lq)
	b.jobs = submit(t, b.ns, b.lq, prefix, n)
	eventually(t, time.Minute, "the burst admitted in part", func() error {
		if admitted, _ := progress(t, b.ns); admitted < 2 {
			return fmt.Errorf("%d admitted", admitted)
		}
		return nil
	})
	b.leader = leader(t, pods)
	for _, p := range pods {
		if p != b.leader {
			b.standby = p
		}
	}
	lease := &coordinationv1.Lease{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: dep.namespace, Name: leaseName}, lease); err != nil {
		t.Fatal(err)
	}
	b.leaseDuration = time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 15)) * time.Second
	admitted, complete := progress(t, b.ns)
	t.Logf("taking the leader %s away (%d of %d jobs admitted, %d complete)", b.leader.name, admitted, len(b.jobs), complete)
	return b
}

// standbyLeadsWithin waits for the standby to lead, at most until the
// deadline since the leader was taken away at gone.
func (b *burst) standbyLeadsWithin(t *testing.T, gone time.Time, deadline time.Duration) {
	t.Helper()
	eventually(t, deadline-time.Since(gone), b.standby.name+" leads", func() error {
		if !b.standby.Leads() {
			return errors.New("not yet")
		}
		return nil
	})
	t.Logf("%s leads %s after the leader was taken away (lease duration %s)", b.standby.name, time.Since(gone).Round(100*time.Millisecond), b.leaseDuration)
}

// replacedAndComplete: the ReplicaSet's replacement replica gets ready
// and every job of the burst completes with exactly one Workload.
func (b *burst) replacedAndComplete(t *testing.T) {
	t.Helper()
	replacement, err := dep.Start()
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, replacement)
	allCompleteOnce(t, b.ns, b.jobs, 3*time.Minute)
}

// The leader is deleted in the middle of a burst of jobs: the standby
// leads within the lease duration plus a few seconds, a replacement
// replica joins, no webhook call fails meanwhile, and every job completes
// with exactly one Workload.
func TestLeaderDeletedMidBurstStandbyTakesOver(t *testing.T) {
	b := midBurst(t, "burst", 16)
	deleted := time.Now()
	if err := dep.Delete(b.leader); err != nil {
		t.Fatal(err)
	}
	// The deleted leader releases the lease as it shuts down
	// (LeaderElectionReleaseOnCancel), and the standby notices at its next
	// retry (controller-runtime's 2 s); the bound is the lease duration in
	// case the release is lost with the process.
	b.standbyLeadsWithin(t, deleted, b.leaseDuration+takeoverSlack)
	b.replacedAndComplete(t)
	b.probe.Stop(t)
}

// The leader is killed (SIGKILL, as the OOM killer does) in the middle of
// a burst: it releases nothing, so the standby leads once the lease has
// expired, within the lease duration plus a few seconds; every job
// completes with exactly one Workload. Webhook calls may fail only while
// the API server can still route them to the dead replica, until its
// readiness probe failed (what any webhook behind a Service meets: the
// shipped probe bounds it).
func TestLeaderKilledMidBurstStandbyTakesOverAfterTheLease(t *testing.T) {
	b := midBurst(t, "kill", 16)
	killed := time.Now()
	type crash struct {
		unready time.Duration
		err     error
	}
	crashed := make(chan crash, 1)
	go func() {
		unready, err := dep.Crash(b.leader)
		crashed <- crash{unready, err}
	}()
	b.standbyLeadsWithin(t, killed, b.leaseDuration+takeoverSlack)
	c := <-crashed
	if c.err != nil {
		t.Fatal(c.err)
	}
	t.Logf("%s's endpoint not ready %s after the kill", b.leader.name, c.unready.Round(100*time.Millisecond))
	b.replacedAndComplete(t)
	// The API server reads EndpointSlices from its informer: a second for
	// the not-ready endpoint to reach it.
	b.probe.StopAllowing(t, killed, killed.Add(c.unready+2*time.Second))
}

// The serving certificate nears its end mid-run (a certificate signed by
// the Secret's CA, valid for 30 more days, put into the Secret): the
// rotators replace it, both replicas serve the new one, the CA and the
// caBundles stay, no webhook call fails and every job completes once.
func TestCertificateRotatedMidRun(t *testing.T) {
	pods := twoReady(t)
	ns, lq := setUp(t)
	probe := startWebhookProbe(ns, lq)
	jobs := submit(t, ns, lq, "rot", 12)

	s := secret(t)
	ca := s.Data["ca.crt"]
	expiring := certSignedBy(t, s.Data["ca.crt"], s.Data["ca.key"], fmt.Sprintf("%s.%s.svc", dep.service.Name, dep.service.Namespace), 30*24*time.Hour)
	s.Data["tls.crt"], s.Data["tls.key"] = expiring.Cert, expiring.Key
	if err := k8s.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	planted := pemCert(t, expiring.Cert)
	var rotated *x509.Certificate
	eventually(t, time.Minute, "the rotators replace the expiring certificate", func() error {
		got := secret(t)
		c := pemCert(t, got.Data["tls.crt"])
		if c.Equal(planted) {
			return errors.New("the Secret still holds the expiring certificate")
		}
		if time.Until(c.NotAfter) < 300*24*time.Hour {
			return fmt.Errorf("the new certificate ends %s", c.NotAfter)
		}
		rotated = c
		return nil
	})
	if got := secret(t).Data["ca.crt"]; !bytes.Equal(got, ca) {
		t.Error("the CA changed with the serving certificate")
	}
	for name, b := range caBundles(t) {
		if !bytes.Equal(b, ca) {
			t.Errorf("webhook %s: caBundle is not the Secret's CA", name)
		}
	}
	for _, p := range pods {
		eventually(t, time.Minute, p.name+" serves the rotated certificate", func() error {
			got, err := servedCert(p, ca)
			if err != nil {
				return err
			}
			if !got.Equal(rotated) {
				return fmt.Errorf("serves %s", got.SerialNumber)
			}
			return nil
		})
	}
	allCompleteOnce(t, ns, jobs, 3*time.Minute)
	probe.Stop(t)
}

// A rolling restart as `kubectl rollout restart` runs one for the shipped
// Deployment (the default strategy, maxSurge and maxUnavailable 25%: of 2
// replicas one surges and none may be unavailable, so a new replica
// starts and an old one goes once it is Ready, twice) while jobs are
// queued and running: no job is lost or duplicated, no webhook call fails.
func TestRollingRestartLosesAndDuplicatesNoJob(t *testing.T) {
	old := twoReady(t)
	ns, lq := setUp(t)
	probe := startWebhookProbe(ns, lq)
	jobs := submit(t, ns, lq, "roll", 16)
	someAdmitted(t, ns)
	roll(t, old, ns, len(jobs))
	if n := len(dep.Live()); n != 2 {
		t.Errorf("%d replicas after the restart, want 2", n)
	}
	allCompleteOnce(t, ns, jobs, 3*time.Minute)
	probe.Stop(t)
}

// An upgrade to a new release as `helm upgrade` (or `make deploy
// IMG=…:next`) runs one: the install rendered again for a new image and
// applied over the old one, and the Deployment rolled onto the new template
// (a new replica surges, an old one goes once it is Ready, twice) while
// jobs are queued and running: no job is lost or duplicated, no webhook
// call fails, and every replica left runs the new release.
func TestUpgradeToANewReleaseRollsOntoIt(t *testing.T) {
	old := twoReady(t)
	ns, lq := setUp(t)
	probe := startWebhookProbe(ns, lq)
	jobs := submit(t, ns, lq, "upgrade", 12)
	someAdmitted(t, ns)
	const next = "trainjob-kueue:e2e-deployed-next"
	objs, err := release.render(next)
	if err != nil {
		t.Fatal(err)
	}
	if err := release.apply(objs); err != nil {
		t.Fatal(err)
	}
	if err := dep.Upgrade(objs); err != nil {
		t.Fatal(err)
	}
	roll(t, old, ns, len(jobs))
	live := dep.Live()
	if len(live) != 2 {
		t.Errorf("%d replicas after the upgrade, want 2", len(live))
	}
	for _, p := range live {
		if p.image != next {
			t.Errorf("%s runs %s after the upgrade, want %s", p.name, p.image, next)
		}
	}
	allCompleteOnce(t, ns, jobs, 3*time.Minute)
	probe.Stop(t)
}

// someAdmitted waits until jobs run while others queue.
func someAdmitted(t *testing.T, ns string) {
	t.Helper()
	eventually(t, time.Minute, "jobs running and queued", func() error {
		if admitted, _ := progress(t, ns); admitted < 2 {
			return fmt.Errorf("%d admitted", admitted)
		}
		return nil
	})
}

// roll replaces each of old as the Deployment controller does with the
// shipped strategy (of 2 replicas one surges, none may be unavailable): a
// new replica starts from the current template, and an old one goes once
// the new one is Ready.
func roll(t *testing.T, old []*pod, ns string, jobs int) {
	t.Helper()
	for _, p := range old {
		next, err := dep.Start()
		if err != nil {
			t.Fatal(err)
		}
		waitReady(t, next)
		admitted, complete := progress(t, ns)
		t.Logf("%s (%s) Ready; deleting %s (%s; %d of %d jobs admitted, %d complete)", next.name, next.image, p.name, p.image, admitted, jobs, complete)
		if err := dep.Delete(p); err != nil {
			t.Fatal(err)
		}
	}
}

// keyPair is a PEM certificate and key.
type keyPair struct{ Cert, Key []byte }

// certSignedBy issues a serving certificate for dnsName from the PEM CA,
// valid for validFor from now.
func certSignedBy(t *testing.T, caPEM, caKeyPEM []byte, dnsName string, validFor time.Duration) keyPair {
	t.Helper()
	ca := pemCert(t, caPEM)
	kb, _ := pem.Decode(caKeyPEM)
	if kb == nil {
		t.Fatal("no PEM CA key")
	}
	var caKey any
	var err error
	if caKey, err = x509.ParsePKCS1PrivateKey(kb.Bytes); err != nil {
		if caKey, err = x509.ParsePKCS8PrivateKey(kb.Bytes); err != nil {
			t.Fatalf("the CA key: %v", err)
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: dnsName},
		DNSNames:     []string{dnsName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
}
