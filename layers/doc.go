// Package layers holds the repository's whole-tree rules, as tests: every
// package imports only packages of lower layers (no cycle, no upward
// arrow), and of the tools and tiers above them, test/ may import hack/
// and hack/ never test/ (docs/development.md says which layer a new
// package goes in); no production function is longer than a screen; the
// docs are a manual, not a diary (docs_test.go); and the others beside
// them.
package layers
