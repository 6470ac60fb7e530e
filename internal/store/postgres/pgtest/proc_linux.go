package pgtest

import (
	"errors"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// owner is the user a server runs as.
type owner struct{ uid, gid int }

// credential is the postgres user when run as root (PostgreSQL refuses to
// run as root), else nil: the server runs as the current user.
func credential() (*owner, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root, and there is no postgres user to run PostgreSQL as (Debian's postgresql package makes one)")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &owner{uid, gid}, nil
}

// procAttr runs a server process as o, in its own process group, and
// kills it when the test binary dies: a killed test never leaves a server
// behind.
func procAttr(o *owner) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if o != nil {
		a.Credential = &syscall.Credential{Uid: uint32(o.uid), Gid: uint32(o.gid)}
	}
	return a
}

// killGroup kills what is left of the process group of a server.
func killGroup(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }
