package preemptcost

import (
	"encoding/json"
	"strconv"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// This file alone knows that Kueue's priority boost is a Workload
// annotation (names.KueuePriorityBoostAnnotation), marked as ours by
// another (names.PriorityBoostAnnotation, the parts): kueue#13414 proposes
// a typed spec.priorityBoost, and moving to it is a change of this file.

// BoostOn is the boost set on wl as it is written, and whether one is.
func BoostOn(wl *kueue.Workload) (value string, set bool) {
	value, set = wl.Annotations[names.KueuePriorityBoostAnnotation]
	return value, set
}

// BoostValue is the boost on wl as Kueue reads it; 0 when absent or
// unreadable.
func BoostValue(wl *kueue.Workload) int32 {
	v, err := strconv.ParseInt(wl.Annotations[names.KueuePriorityBoostAnnotation], 10, 32)
	if err != nil {
		return 0
	}
	return int32(v)
}

// OursOn is the boost trainjob-kueue set on wl, by its parts; ok is false
// when the boost there is not ours (or there is none).
func OursOn(wl *kueue.Workload) (b Boost, ok bool) {
	parts := wl.Annotations[names.PriorityBoostAnnotation]
	if parts == "" {
		return Boost{}, false
	}
	if json.Unmarshal([]byte(parts), &b) != nil {
		return Boost{}, false
	}
	return b, true
}

// Marked tells whether wl carries our mark, readable or not.
func Marked(wl *kueue.Workload) bool { return wl.Annotations[names.PriorityBoostAnnotation] != "" }

// Written tells whether wl holds exactly b as ours.
func Written(wl *kueue.Workload, b Boost) bool {
	value, _ := BoostOn(wl)
	return Marked(wl) && value == strconv.Itoa(int(b.Total)) && wl.Annotations[names.PriorityBoostAnnotation] == partsOf(b)
}

// SetOn writes b on wl as ours; nil removes the boost and our mark.
func SetOn(wl *kueue.Workload, b *Boost) {
	if b == nil {
		delete(wl.Annotations, names.KueuePriorityBoostAnnotation)
		delete(wl.Annotations, names.PriorityBoostAnnotation)
		return
	}
	if wl.Annotations == nil {
		wl.Annotations = map[string]string{}
	}
	wl.Annotations[names.KueuePriorityBoostAnnotation] = strconv.Itoa(int(b.Total))
	wl.Annotations[names.PriorityBoostAnnotation] = partsOf(*b)
}

// partsOf is the value of our mark: the boost's parts.
func partsOf(b Boost) string {
	data, _ := json.Marshal(b) // plain integers: cannot fail
	return string(data)
}
