//go:build !linux

package pgtest

import (
	"errors"
	"syscall"
)

type owner struct{ uid, gid int }

// credential: the throwaway server is started on Linux only.
func credential() (*owner, error) {
	return nil, errors.New("pgtest starts PostgreSQL on Linux only")
}

func procAttr(*owner) *syscall.SysProcAttr { return nil }

func killGroup(int) {}
