package overview

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/paging"
)

// pagesNothing answers as controller-runtime's cache does: a limit cuts
// the answer short, a continue token is refused, and every answer says
// "continue-not-supported".
type pagesNothing struct {
	client.Reader
	pods int
}

func (p pagesNothing) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	if o.Continue != "" {
		return errContinue
	}
	pods := list.(*corev1.PodList)
	for i := range p.pods {
		if o.Limit > 0 && int64(i) >= o.Limit {
			break
		}
		pods.Items = append(pods.Items, corev1.Pod{})
	}
	pods.Continue = "continue-not-supported"
	return nil
}

type continueRefused struct{}

func (continueRefused) Error() string { return "continue list option is not supported by the cache" }

var errContinue error = continueRefused{}

// Through whole, a paged list of the cache reads every object once, in
// one page.
func TestAPagedListOfTheCacheReadsItWhole(t *testing.T) {
	var pages, pods int
	err := paging.List(context.Background(), whole{pagesNothing{pods: 1200}}, func() *corev1.PodList { return &corev1.PodList{} },
		func(l *corev1.PodList) { pages++; pods += len(l.Items) })
	if err != nil || pages != 1 || pods != 1200 {
		t.Errorf("paged list through whole: %d pages, %d pods, %v; want 1 page of 1200", pages, pods, err)
	}
}
