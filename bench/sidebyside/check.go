package main

import (
	"fmt"
)

// check is what the smoke run asserts: every measurement came out, and
// trainjob-kueue did without dry runs.
func check(s *Summary) error {
	for _, name := range []string{setupFloor, setupInTree, setupOurs} {
		st := s.Setups[name]
		if st == nil || st.ThroughputJobsPerS <= 0 {
			return fmt.Errorf("no admissions measured for %s", name)
		}
		if unfinishedCount(st.Unfinished) > 0 {
			return fmt.Errorf("%s stalled: %s", name, describeStates(st.Unfinished))
		}
		if name == setupFloor {
			continue
		}
		if st.CreatedToWorkloadMS == nil || st.AdmittedToUnsuspendedMS == nil || st.CreatedToRunningMS == nil || st.RequestsPerJob == nil || st.CPUSeconds == nil {
			return fmt.Errorf("%s: a measurement is missing: %+v", name, st)
		}
	}
	for name, r := range s.Ratios {
		if r == nil {
			return fmt.Errorf("ratio %s could not be computed", name)
		}
	}
	if d := s.Setups[setupOurs].DryRunPerJob; *d != 0 {
		return fmt.Errorf("trainjob-kueue made %.2f dry-run requests per job", *d)
	}
	return nil
}
