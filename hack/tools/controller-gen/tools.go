//go:build tools

// Package tools pins controller-gen, which generates the deepcopy functions
// of trainjob/ (make generate).
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
