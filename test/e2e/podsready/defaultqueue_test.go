package podsready_test

import (
	"testing"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// With Kueue's JobSet integration off and its pod integration on (this
// suite's Kueue), an unlabelled TrainJob in a namespace with a LocalQueue
// named default is queued once, as its TrainJob: its pods are not taken by
// Kueue's pod integration either.
func TestADefaultLocalQueueQueuesATrainJobOnceWithKueuesJobSetIntegrationOff(t *testing.T) {
	ns := fixtures.NamespaceWithDefaultQueue(t, ctx, k8s, "default-queue")
	fixtures.RunQueuedOnce(t, ctx, k8s, ns, "unlabelled")
}
