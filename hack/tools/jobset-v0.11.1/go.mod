// Tools module pinning the JobSet release Trainer v2.2.0 pins in its go.mod;
// its controller manager is the module's root package.
module github.com/trainjob-kueue/trainjob-kueue/hack/tools/jobset-v0.11.1

go 1.25.0

require sigs.k8s.io/jobset v0.11.1
