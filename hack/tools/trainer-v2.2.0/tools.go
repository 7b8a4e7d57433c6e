//go:build tools

// Package tools records the Trainer command built from this module.
package tools

import _ "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager"
