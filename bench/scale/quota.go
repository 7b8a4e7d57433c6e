package main

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// setGPUQuota sets the ClusterQueue's GPU quota: a wave of admissions.
func setGPUQuota(ctx context.Context, c client.Client, gpus int64) error {
	for attempt := 0; ; attempt++ {
		var cq kueue.ClusterQueue
		if err := c.Get(ctx, client.ObjectKey{Name: cqName}, &cq); err != nil {
			return err
		}
		res := cq.Spec.ResourceGroups[0].Flavors[0].Resources
		for i := range res {
			if res[i].Name == fixtures.GPU {
				res[i].NominalQuota = *resource.NewQuantity(gpus, resource.DecimalSI)
			}
		}
		err := c.Update(ctx, &cq)
		if err == nil || attempt == 10 {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
