// Package docstest checks that the project's docs say only what is true:
// every test that docs/reliability.md names exists, and nothing in the
// repository cites a document the repository does not hold.
package docstest
