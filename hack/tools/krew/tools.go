//go:build tools

// The validator the tests run (go run), pinned by this module.
package main

import _ "sigs.k8s.io/krew/cmd/validate-krew-manifest"
