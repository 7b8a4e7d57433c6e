// Package preemptionnotice_test holds the example training loop and
// runtime of docs/preemption-notice.md to what trainjob-kueue writes: the
// runtime's downwardAPI volume hands the pod's annotations to the path
// train.py reads, and train.py understands the notice as the manager
// writes it, in the file format the kubelet gives it. The local clusters'
// kwok nodes have no kubelet, so this is where the file is played.
package preemptionnotice_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// The runtime mounts the pod's annotations where train.py reads them by
// default, and the ClusterQueue beside it carries a policy the webhook
// takes, with a notice.
func TestTheRuntimeHandsTheNoticeToTheLoop(t *testing.T) {
	rt, cq := manifests(t)
	if len(rt.Spec.Template.Spec.ReplicatedJobs) != 1 {
		t.Fatalf("the runtime has %d replicated jobs; want 1", len(rt.Spec.Template.Spec.ReplicatedJobs))
	}
	pod := rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	var got []string
	for _, v := range pod.Volumes {
		if v.DownwardAPI == nil {
			continue
		}
		for _, m := range pod.Containers[0].VolumeMounts {
			if m.Name != v.Name {
				continue
			}
			for _, item := range v.DownwardAPI.Items {
				if item.FieldRef != nil {
					got = append(got, item.FieldRef.FieldPath+" at "+filepath.Join(m.MountPath, item.Path))
				}
			}
		}
	}
	if diff := cmp.Diff([]string{"metadata.annotations at " + annotationsDefault(t)}, got); diff != "" {
		t.Errorf("the pod's annotations as a file (-train.py reads +the runtime mounts):\n%s", diff)
	}

	policy, ok, err := preemptcost.PolicyOf(cq)
	if err != nil || !ok {
		t.Fatalf("the ClusterQueue's policy: ok %v, %v", ok, err)
	}
	if policy.Notice == nil || policy.Notice.Seconds <= 0 {
		t.Errorf("the ClusterQueue's policy gives no notice: %+v", policy)
	}
}

// train.py, given the notice as the manager writes it in the file the
// kubelet makes of the pod's annotations (beside another annotation),
// checkpoints at once and reports that checkpoint as Trainer's status
// server takes it.
func TestTheLoopCheckpointsOnTheNotice(t *testing.T) {
	since := time.Unix(1_796_638_380, 0)
	notice := preemptcost.Notice{Since: since, Until: since.Add(2 * time.Minute), LastCheckpoint: since.Add(-10 * time.Minute).Unix()}
	dir := t.TempDir()
	annotations := filepath.Join(dir, "annotations")
	file := downwardAPIFile(map[string]string{
		names.PreemptingAnnotation:   notice.Value(),
		"kubectl.kubernetes.io/note": `a "quoted" value`,
	})
	if err := os.WriteFile(annotations, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "train.py", "--steps", "5", "--checkpoint", filepath.Join(dir, "ckpt.json"), "--annotations", annotations)
	cmd.Env = append(os.Environ(), "KUBEFLOW_TRAINER_SERVER_URL=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python3 train.py (python3 is on the machines make test runs on): %v\n%s%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if want := fmt.Sprintf("preemption notice: stop by %d;", notice.Until.Unix()); !strings.Contains(out, want) {
		t.Errorf("train.py did not take the notice: no %q in\n%s", want, out)
	}
	if want := `"name": "` + preemptcost.DefaultCheckpointMetric + `"`; !strings.Contains(out, want) {
		t.Errorf("train.py reported no checkpoint under %s:\n%s", preemptcost.DefaultCheckpointMetric, out)
	}
	if n := strings.Count(out, "preemption notice:"); n != 1 {
		t.Errorf("told %d times of one notice; want once:\n%s", n, out)
	}
}

// downwardAPIFile is the file a downwardAPI volume item of
// metadata.annotations holds, as the kubelet writes it
// (k8s.io/kubernetes/pkg/fieldpath.FormatMap): one key="value" line per
// annotation, sorted by key, each value quoted as Go's %q does.
func downwardAPIFile(annotations map[string]string) string {
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%v=%q", k, annotations[k]))
	}
	return strings.Join(lines, "\n")
}

// manifests are runtime.yaml's TrainingRuntime and ClusterQueue, decoded
// strictly: a field the API does not have fails the test.
func manifests(t *testing.T) (*trainer.TrainingRuntime, *kueue.ClusterQueue) {
	t.Helper()
	data, err := os.ReadFile("runtime.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(data), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("runtime.yaml has %d documents; want the runtime and the ClusterQueue", len(docs))
	}
	rt, cq := &trainer.TrainingRuntime{}, &kueue.ClusterQueue{}
	if err := yaml.UnmarshalStrict([]byte(docs[0]), rt); err != nil {
		t.Fatalf("the TrainingRuntime: %v", err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), cq); err != nil {
		t.Fatalf("the ClusterQueue: %v", err)
	}
	return rt, cq
}

// annotationsDefault is where train.py reads the annotations when not told.
func annotationsDefault(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("train.py")
	if err != nil {
		t.Fatal(err)
	}
	const flag = `p.add_argument("--annotations", default="`
	_, rest, ok := strings.Cut(string(src), flag)
	if !ok {
		t.Fatalf("train.py has no %s…", flag)
	}
	path, _, _ := strings.Cut(rest, `"`)
	return path
}
