package informercache

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/json"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// queuedJob is one queued TrainJob as the cache holds it: the job and its
// Workload, captured from make scale (testdata/queued-*.json).
type queuedJob struct {
	job      []byte
	workload []byte
}

func queuedJobs(t testing.TB) []queuedJob {
	t.Helper()
	var out []queuedJob
	for _, rt := range []string{"torch-init", "mpi", "torch"} {
		read := func(kind string) []byte {
			data, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("queued-%s-%s.json", kind, rt)))
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
		out = append(out, queuedJob{job: read("trainjob"), workload: read("workload")})
	}
	return out
}

// decodeCached decodes data as the informer does and passes it through the
// cache's transform; each copy gets its own name and UIDs, as distinct jobs.
func decodeCached(tb testing.TB, transform func(any) (any, error), data []byte, obj client.Object, i int) client.Object {
	tb.Helper()
	data = bytes.ReplaceAll(data, []byte(`job-0000`), fmt.Appendf(nil, "job-%d-", i))
	data = bytes.ReplaceAll(data, []byte(`-4`), fmt.Appendf(nil, "-%04x", i%0xffff))
	if err := json.UnmarshalCaseSensitivePreserveInts(data, obj); err != nil {
		tb.Fatal(err)
	}
	got, err := transform(obj)
	if err != nil {
		tb.Fatal(err)
	}
	return got.(client.Object)
}

// BenchmarkCachedBytesPerQueuedJob measures the heap the cache keeps per
// queued job (its TrainJob and its Workload, a third each of make scale's
// runtimes): what make scale's RSS per 1,000 queued jobs grows by, before
// the GC's headroom.
func BenchmarkCachedBytesPerQueuedJob(b *testing.B) {
	jobs := queuedJobs(b)
	const perRound = 3000
	var kept []client.Object
	var total float64
	for b.Loop() {
		transform := Options().DefaultTransform
		kept = nil
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range perRound {
			q := jobs[i%len(jobs)]
			kept = append(kept,
				decodeCached(b, transform, q.job, &trainjob.TrainJob{}, i),
				decodeCached(b, transform, q.workload, &kueue.Workload{}, i))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		total += float64(after.HeapAlloc) - float64(before.HeapAlloc)
		runtime.KeepAlive(kept)
	}
	b.ReportMetric(total/float64(b.N)/perRound, "B/job")
}
