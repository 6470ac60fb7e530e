package doctor

import (
	"strings"

	"github.com/taskie-dev/taskie/internal/config"
)

// boxCheck says whether the Claude reviewer may run commands (Bash) in the
// repository at root, and why (docs/hook.md, "The reviewer's box"). Either
// answer is fine; a pinned program that changed is a problem: reviews that
// run it stop until the user trusts the repository again.
func boxCheck(root string, cfg config.Config) Check {
	const name = "reviewer box"
	b := config.ReviewerBox(root)
	if b.Bash {
		return Check{Name: name, OK: true, Detail: "the reviewer may run commands (Bash): " + b.Why}
	}
	c := Check{Name: name, OK: true,
		Detail: "the reviewer reads the code and writes its review but may run no commands (no Bash): " + b.Why + "; `taskie trust` allows them"}
	if len(cfg.Changed) > 0 {
		files := strings.Join(cfg.Changed, ", ")
		c.OK = false
		c.Detail = files + " changed since `taskie trust`: the reviewer that runs it does not run, and the reviewer may run no commands (no Bash)"
		c.Fix = "read " + files + ", then run `taskie trust` again"
	}
	return c
}
