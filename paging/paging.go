// Package paging lists a kind page by page: a list across a big cluster
// is many small answers from the API server's watch cache, never one
// response holding every object at once.
package paging

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Size is how many objects a page holds: as kubectl's default chunk size.
const Size = 500

// List lists with opts, Size objects a page, calling each with each page
// in turn (a page is the caller's to keep). A listing that outlives its
// continue token (the API server compacted past it) fails, saying so:
// pages from two points in time would show a job twice or not at all.
func List[L client.ObjectList](ctx context.Context, c client.Reader, newPage func() L, each func(L), opts ...client.ListOption) error {
	next := ""
	for {
		page := newPage()
		if err := c.List(ctx, page, append(slices.Clone(opts), client.Limit(Size), client.Continue(next))...); err != nil {
			if apierrors.IsResourceExpired(err) {
				return fmt.Errorf("the list changed too much while it was read page by page (its continue token expired); run it again: %w", err)
			}
			return err
		}
		each(page)
		asked := next
		if next = page.GetContinue(); next == "" {
			return nil
		}
		if next == asked {
			// A reader that pages nothing (a cache) would be asked the
			// same page for ever.
			return fmt.Errorf("the list answered continue token %q for the page it names: it does not page", next)
		}
	}
}

// Items lists every object with opts, page by page, and returns them in
// one slice: the pages are kept apart and joined once at the end (ten
// thousand Workloads appended page by page were copied over and over
// as the slice grew).
func Items[L client.ObjectList, T any](ctx context.Context, c client.Reader, newPage func() L, items func(L) []T, opts ...client.ListOption) ([]T, error) {
	var pages [][]T
	err := List(ctx, c, newPage, func(l L) { pages = append(pages, items(l)) }, opts...)
	return slices.Concat(pages...), err
}
