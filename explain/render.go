package explain

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	corev1 "k8s.io/api/core/v1"
)

// WriteText prints the explanation for people.
func (ex *Explanation) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TrainJob:\t%s\n", ex.Job)
	queue := ex.LocalQueue
	if ex.ClusterQueue != "" {
		queue += " → ClusterQueue " + ex.ClusterQueue
	}
	if ex.Cohort != "" {
		queue += " (cohort " + ex.Cohort + ")"
	}
	fmt.Fprintf(tw, "Queue:\t%s\n", cmp.Or(queue, "(none)"))
	fmt.Fprintf(tw, "State:\t%s\n", ex.State)
	if ex.RuntimeFrom != "" {
		fmt.Fprintf(tw, "Pods from:\t%s\n", ex.RuntimeFrom)
	}
	switch {
	case ex.Position != nil:
		fmt.Fprintf(tw, "Position:\t%d in LocalQueue, %d in ClusterQueue\n", ex.Position.InLocalQueue, ex.Position.InClusterQueue)
	case ex.PositionNote != "" && ex.State.Waiting():
		fmt.Fprintf(tw, "Position:\tunknown (%s)\n", ex.PositionNote)
	}
	switch {
	case ex.ExpectedStart != nil:
		fmt.Fprintf(tw, "Expected:\t%s\n", ex.ExpectedStart.Sentence())
	case ex.ExpectedNote != "":
		fmt.Fprintf(tw, "Expected:\tunknown (%s)\n", ex.ExpectedNote)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "ROLE\tPODS\tPER POD\tTOTAL\tFLAVOR")
	for _, r := range ex.Roles {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Name, r.Count, compact(r.PerPod), compact(r.Total), roleFlavorText(&r))
	}
	writeDRA(tw, ex)
	if len(ex.Quota) > 0 {
		fmt.Fprintln(tw)
		fmt.Fprintf(tw, "QUOTA OF %s\tRESOURCE\tNOMINAL\tBORROWING LIMIT\tUSED\tCOHORT LENDS\n", ex.ClusterQueue)
		for _, l := range ex.Quota {
			limit := "-"
			if l.BorrowingLimit != nil {
				limit = l.BorrowingLimit.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", l.Flavor, l.Resource, l.Nominal.String(), limit, l.Used.String(), l.CohortLends.String())
		}
	}
	fmt.Fprintln(tw)
	if p := ex.Priority; p != nil {
		writePriority(tw, p)
	}
	if ex.PreemptedBy != "" {
		fmt.Fprintf(tw, "Preempted:\t%s\n", ex.PreemptedBy)
	}
	if ex.KueueSays != "" {
		fmt.Fprintf(tw, "Kueue says:\t%s\n", ex.KueueSays)
	}
	fmt.Fprintf(tw, "Verdict:\t%s\n", ex.Verdict)
	return tw.Flush()
}

func roleFlavorText(r *roleExplanation) string {
	if len(r.Flavors) > 0 {
		set := map[string]string{}
		for _, f := range r.Flavors {
			set[f] = f
		}
		return strings.Join(slices.Sorted(maps.Keys(set)), "+")
	}
	parts := make([]string, 0, len(r.Candidates))
	for _, c := range r.Candidates {
		switch c.Fit {
		case forecast.Fits:
			parts = append(parts, c.Flavor+" (fits)")
		case forecast.Borrows:
			parts = append(parts, c.Flavor+" (borrows "+listText(c.Borrowed)+")")
		case forecast.NoFit:
			parts = append(parts, c.Flavor+" (short "+listText(c.Short)+")")
		case forecast.Ineligible:
			parts = append(parts, c.Flavor+" (ineligible)")
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// compact prints a resource list as "cpu=1 nvidia.com/gpu=8", without
// zero entries.
func compact(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, r := range slices.Sorted(maps.Keys(l)) {
		v := l[r]
		if v.IsZero() {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s", r, v.String()))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// writePriority says the job's effective priority, its boost's parts, and
// where it stands among the ClusterQueue's candidates for preemption.
func writePriority(w io.Writer, p *priorityExplanation) {
	line := fmt.Sprintf("%d (base %d + boost %d", p.Effective, p.Base, p.Boost)
	if b := p.Parts; b != nil {
		line += fmt.Sprintf(": progress %d, preemptions %d, time left %d", b.Progress, b.Preemptions, b.TimeLeft)
		if b.Checkpoint > 0 {
			line += fmt.Sprintf(", work lost since the last checkpoint %d", b.Checkpoint)
		}
		if b.MinRunTime > 0 {
			line += fmt.Sprintf(", minimum run time %d", b.MinRunTime)
		}
	}
	if p.BoostBy != "" {
		line += ", set by " + p.BoostBy
	}
	fmt.Fprintf(w, "Priority:\t%s)\n", line)
	if p.Policy != "" {
		fmt.Fprintf(w, "Preemption cost:\t%s\n", p.Policy)
	}
	if p.Inactive != "" {
		fmt.Fprintf(w, "Policy inactive:\t%s\n", p.Inactive)
	}
	if l := p.Lost; l != nil {
		line := fmt.Sprintf("%s since the last checkpoint", time.Duration(l.Seconds)*time.Second)
		if l.NextStepSeconds > 0 {
			line += fmt.Sprintf("; the boost's next step in %s", time.Duration(l.NextStepSeconds)*time.Second)
		}
		fmt.Fprintf(w, "Lost if preempted now:\t%s\n", line)
	}
	if len(p.Candidates) > 0 {
		var order []string
		for _, c := range p.Candidates {
			name := fmt.Sprintf("%s (%d)", c.Workload, c.Effective)
			if c.This {
				name = "this job " + name
			}
			order = append(order, name)
		}
		fmt.Fprintf(w, "Preempted first:\t%s\n", strings.Join(order, ", "))
	}
}
