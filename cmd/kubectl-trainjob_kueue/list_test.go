package main

import (
	"bytes"
	"strings"
	"testing"
)

// Bad flags are a usage error (exit 2) that says what is wrong, before
// any cluster is asked.
func TestListRefusesBadFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"a bad selector":   {args: []string{"-l", "a in (b"}, want: "-l a in (b"},
		"a stray argument": {args: []string{"job"}, want: "usage: kubectl trainjob-kueue list"},
		"a zero interval":  {args: []string{"--watch", "--interval", "0s"}, want: "usage: kubectl trainjob-kueue list"},
		"an unknown flag":  {args: []string{"--nope"}, want: "flag provided but not defined"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := listMain(tc.args, &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), tc.want)
			}
		})
	}
}
