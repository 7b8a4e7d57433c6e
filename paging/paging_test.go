package paging_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/paging"
)

// pager serves n ConfigMaps in pages of what the list asks, as the API
// server does, and records the limits and continue tokens asked.
type pager struct {
	client.Reader
	n       int
	asked   []string
	expires bool
}

func (p *pager) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	p.asked = append(p.asked, fmt.Sprintf("limit=%d continue=%q", o.Limit, o.Continue))
	if p.expires && o.Continue != "" {
		return apierrors.NewResourceExpired("too old resource version")
	}
	from := 0
	fmt.Sscan(o.Continue, &from)
	cms := list.(*corev1.ConfigMapList)
	for i := from; i < p.n && i < from+int(o.Limit); i++ {
		cms.Items = append(cms.Items, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint(i)}})
	}
	if end := from + int(o.Limit); end < p.n {
		cms.Continue = fmt.Sprint(end)
	}
	return nil
}

func TestListReadsEveryPageInTurn(t *testing.T) {
	p := &pager{n: 1201}
	var got int
	err := paging.List(context.Background(), p, func() *corev1.ConfigMapList { return &corev1.ConfigMapList{} },
		func(l *corev1.ConfigMapList) { got += len(l.Items) })
	if err != nil || got != 1201 {
		t.Fatalf("List: %d objects, %v; want 1201", got, err)
	}
	want := []string{`limit=500 continue=""`, `limit=500 continue="500"`, `limit=500 continue="1000"`}
	if strings.Join(p.asked, "; ") != strings.Join(want, "; ") {
		t.Errorf("asked %q, want %q", p.asked, want)
	}
}

func TestAnExpiredContinueTokenFailsSayingSo(t *testing.T) {
	p := &pager{n: 1201, expires: true}
	err := paging.List(context.Background(), p, func() *corev1.ConfigMapList { return &corev1.ConfigMapList{} }, func(*corev1.ConfigMapList) {})
	if !apierrors.IsResourceExpired(errors.Unwrap(err)) || !strings.Contains(err.Error(), "run it again") {
		t.Errorf("List: %v; want the expiry, wrapped, with what to do", err)
	}
}

func TestItemsJoinsThePages(t *testing.T) {
	p := &pager{n: 1201}
	got, err := paging.Items(context.Background(), p, func() *corev1.ConfigMapList { return &corev1.ConfigMapList{} },
		func(l *corev1.ConfigMapList) []corev1.ConfigMap { return l.Items })
	if err != nil || len(got) != 1201 || got[0].Name != "0" || got[1200].Name != "1200" {
		t.Fatalf("Items: %d objects, %v", len(got), err)
	}
}

// A reader that answers every page with the same continue token (as
// controller-runtime's cache does) fails the list instead of looping.
func TestAReaderThatDoesNotPageIsNotAskedForEver(t *testing.T) {
	r := &stuck{}
	err := paging.List(context.Background(), r, func() *corev1.ConfigMapList { return &corev1.ConfigMapList{} }, func(*corev1.ConfigMapList) {})
	if err == nil || !strings.Contains(err.Error(), "does not page") || r.asked > 2 {
		t.Errorf("List: %v after %d pages; want a failure saying it does not page, after 2", err, r.asked)
	}
}

type stuck struct {
	client.Reader
	asked int
}

func (s *stuck) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	s.asked++
	list.(*corev1.ConfigMapList).Continue = "continue-not-supported"
	return nil
}
