package explain

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// ErrRefused is a manifest the API server would refuse: an admission
// webhook or policy, or the schema.
var ErrRefused = errors.New("the API server would refuse it")

// DryRun asks the API server to create job without storing it (a
// server-side dry run: every admission webhook and policy answers, ours,
// Kueue's and Trainer's among them) and returns the job as it would be
// stored, not created (no UID). A refusal of the manifest is ErrRefused
// with the API server's words; a user who may not create TrainJobs gets
// the manifest back as it was and a note saying it was not dry-run.
func DryRun(ctx context.Context, w client.Writer, job *trainjob.TrainJob) (*trainjob.TrainJob, string, error) {
	tried := job.DeepCopy()
	err := w.Create(ctx, tried, client.DryRunAll)
	switch {
	case err == nil:
		tried.UID = ""
		return tried, "", nil
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "cannot create resource"):
		return job, fmt.Sprintf("not dry-run (what admission would change is not shown): %v", err), nil
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsAlreadyExists(err):
		return nil, "", fmt.Errorf("%w: %v", ErrRefused, err)
	}
	return nil, "", fmt.Errorf("dry-run create of TrainJob %s/%s: %w", job.Namespace, job.Name, err)
}
