package loadharness

import (
	"flag"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// OurUser is trainjob-kueue's identity on the local cluster: its
// requests are counted in the audit log under it.
const OurUser = "system:serviceaccount:trainjob-kueue-system:trainjob-kueue-controller-manager"

// Flags both harnesses take.
type Flags struct {
	// N: the TrainJobs of a run.
	N int
	// Out: the output directory.
	Out string
	// Keep: leave the cluster up afterwards, to look at.
	Keep bool
	// Trainer and Kueue: the releases the cluster runs.
	Trainer string
	Kueue   string
}

// Register the flags on fs: -n (n by default, said by nUsage), -out,
// -keep (said by keepUsage), -trainer-version, -kueue-version.
func (f *Flags) Register(fs *flag.FlagSet, n int, nUsage, keepUsage string) {
	fs.IntVar(&f.N, "n", n, nUsage)
	fs.StringVar(&f.Out, "out", ".bench", "output directory")
	fs.BoolVar(&f.Keep, "keep", false, keepUsage)
	// Kueue's in-tree integration handles only Trainer v2.2 and later
	// since Kueue v0.17: v2.3 is a release both integrations serve.
	fs.StringVar(&f.Trainer, "trainer-version", localcluster.NewestTrainerVersion, "Kubeflow Trainer release")
	fs.StringVar(&f.Kueue, "kueue-version", localcluster.DefaultKueueVersion, "Kueue release")
}
