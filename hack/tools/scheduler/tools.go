//go:build tools

// Package tools records the scheduler built from this module.
package tools

import _ "sigs.k8s.io/scheduler-plugins/cmd/scheduler"
