// Package docstest checks that the project's docs say only what is true:
// every test that docs/reliability.md names exists.
package docstest
