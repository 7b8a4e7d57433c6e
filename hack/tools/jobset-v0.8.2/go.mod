// Tools module pinning the JobSet release Trainer v2.0.1 pins in its go.mod;
// its controller manager is the module's root package.
module github.com/trainjob-kueue/trainjob-kueue/hack/tools/jobset-v0.8.2

go 1.25.0

require sigs.k8s.io/jobset v0.8.2
