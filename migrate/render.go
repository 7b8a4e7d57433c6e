package migrate

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Write prints the verdicts as a table, and a last line that says whether
// the switch may go ahead: whether any running job would be stopped.
func Write(w io.Writer, verdicts []Verdict) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tSTATE\tTHE SWITCH\tWHY")
	for _, v := range verdicts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Namespace, v.Name, v.State, v.Decision, v.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if stops := Stops(verdicts); stops > 0 {
		_, err := fmt.Fprintf(w, "\n%d running TrainJob(s) would be stopped by the switch: wait until they finish, or accept their restart.\n", stops)
		return err
	}
	_, err := fmt.Fprintf(w, "\nNo running TrainJob would be stopped by the switch (%d checked).\n", len(verdicts))
	return err
}

// Stops counts the verdicts that stop a running job.
func Stops(verdicts []Verdict) int {
	n := 0
	for _, v := range verdicts {
		if v.StopsARunningJob() {
			n++
		}
	}
	return n
}
