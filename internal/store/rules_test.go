package store_test

import (
	"github.com/taskie-dev/taskie/internal/parallel"
	"github.com/taskie-dev/taskie/internal/store"
)

// The claims tests apply taskie's policy, as the shell hands it over.
func init() {
	store.SetClaimRules(store.ClaimRules{Claim: parallel.DecideClaimAt, Heartbeat: parallel.DecideHeartbeatAt, Release: parallel.DecideReleaseAt, Fence: parallel.DecideFence})
}
