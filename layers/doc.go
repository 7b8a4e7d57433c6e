// Package layers holds the repository's one whole-tree rule, as a test:
// every package imports only packages of lower layers (no cycle, no
// upward arrow), and of the tools and tiers above them, test/ may import
// hack/ and hack/ never test/. docs/development.md says which layer a new
// package goes in.
package layers
