package restartwatch

import (
	"strings"
	"testing"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// A Trainer upgraded in place, to a release that serves another shape,
// stops the manager; the same CRD does not.
func TestShapeChangedOnInPlaceUpgrade(t *testing.T) {
	v21, err := discovery.DetectShape(fixtures.TrainerCRD(t, "v2.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ShapeChanged(fixtures.TrainerCRD(t, "v2.1.0"), v21); err != nil {
		t.Errorf("same CRD: %v", err)
	}
	if err := ShapeChanged(fixtures.TrainerCRD(t, "v2.3.0"), v21); err == nil || !strings.Contains(err.Error(), "spec.runtimePatches") {
		t.Errorf("v2.1 -> v2.3 must be noticed: %v", err)
	}
	v22, _ := discovery.DetectShape(fixtures.TrainerCRD(t, "v2.2.1"))
	if err := ShapeChanged(fixtures.TrainerCRD(t, "v2.3.0"), v22); err == nil {
		t.Errorf("v2.2 -> v2.3 changes the resourcesPerNode rules and must be noticed")
	}
}
