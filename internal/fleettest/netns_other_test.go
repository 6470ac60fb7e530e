//go:build !linux

package fleettest

import (
	"errors"
	"testing"
)

func namespaces(*testing.T, int) ([]machine, error) {
	return nil, errors.New("network namespaces are Linux's")
}

func enter(ns string) error { return nil }
