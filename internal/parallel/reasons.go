package parallel

import (
	"strconv"
	"strings"
)

// reasons explains task i's wave: what its dependencies allowed, each
// move to a later wave, an inherited priority and a parked status.
func (s *scheduler) reasons(i int) []string {
	out := []string{s.depReason(i)}
	out = s.moveReasons(i, out)
	t := s.g.tasks[i]
	if from := s.r.from[i]; from != 0 {
		out = append(out, "priority "+PriorityName(s.r.eff[i])+", inherited from task "+from.String()+
			" (own: "+PriorityName(t.Priority)+")")
	}
	switch t.standing() {
	case Parked:
		out = append(out, "status "+t.Status+": not ready until that changes")
	case AwaitingCTO:
		out = append(out, "in cto_intervention: not ready until the CTO decides")
	}
	return out
}

// depReason is "wave 2: depends on 1 (wave 1), 4 (done)" or "wave 1: no
// dependencies".
func (s *scheduler) depReason(i int) string {
	var b strings.Builder
	b.WriteString("wave ")
	b.WriteString(strconv.Itoa(s.earliest[i]))
	deps := s.g.tasks[i].Deps
	if len(deps) == 0 {
		b.WriteString(": no dependencies")
		return b.String()
	}
	b.WriteString(": depends on ")
	for k, d := range deps {
		if k > 0 {
			b.WriteString(", ")
		}
		j := s.g.idx[d]
		b.WriteString(d.String())
		if w := s.wave[j]; w > 0 {
			b.WriteString(" (wave " + strconv.Itoa(w) + ")")
		} else if s.out != nil && s.out[j] == AsideFinished {
			b.WriteString(" (result complete)")
		} else {
			b.WriteString(" (" + s.g.tasks[j].shown() + ")")
		}
	}
	return b.String()
}

// moveReasons adds one reason per file clash and per run of full waves
// between the task's earliest wave and its own. A run of more than two
// waves turned away by clashes gives two reasons, its first clash and a
// summary naming the last, so a task pushed back through hundreds of
// waves (every task names one shared file) stays readable and cheap.
func (s *scheduler) moveReasons(i int, out []string) []string {
	placed, cs := s.wave[i], s.clashes[i]
	for w := s.earliest[i]; w < placed; {
		if len(cs) > 0 && cs[0].wave == w {
			run := 1
			for run < len(cs) && cs[run].wave == w+run {
				run++
			}
			if run <= 2 {
				out = append(out, "moved to wave "+strconv.Itoa(w+1)+": "+s.clashText(cs[0]))
				cs, w = cs[1:], w+1
				continue
			}
			last := cs[run-1]
			out = append(out, "moved to wave "+strconv.Itoa(w+1)+": "+s.clashText(cs[0]),
				"moved to wave "+strconv.Itoa(w+run)+": a file clash in each of waves "+strconv.Itoa(w+1)+"–"+strconv.Itoa(w+run-1)+
					" (the last: "+s.clashText(last)+")")
			cs, w = cs[run:], w+run
			continue
		}
		end := placed
		if len(cs) > 0 {
			end = cs[0].wave
		}
		full := "wave " + strconv.Itoa(w)
		if end-1 > w {
			full = "waves " + strconv.Itoa(w) + "–" + strconv.Itoa(end-1)
		}
		out = append(out, "moved to wave "+strconv.Itoa(end)+": "+full+" full ("+strconv.Itoa(s.max)+")")
		w = end
	}
	return out
}

func (s *scheduler) clashText(c clash) string {
	other := s.g.tasks[c.other].ID.String()
	if c.mine == c.theirs {
		return "shares " + c.mine + " with task " + other
	}
	return c.mine + " overlaps " + c.theirs + " of task " + other
}
