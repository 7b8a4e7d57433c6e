//go:build tools

// Package tools records the kwok command built from this module.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
