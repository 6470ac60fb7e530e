package plan

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSortSeriesPackedLikeCompared: the packed sort of review series (one
// number per file) orders files by base, task and iteration as the
// comparison sort it replaces for usual plans, which still sorts the rest
// (a task id of 2^28 or more).
func TestSortSeriesPackedLikeCompared(t *testing.T) {
	bases := []string{"all-code", "design", "plan", "task", "tasks"}
	for _, big := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(1, 2))
		var files []seriesFile
		for range 3000 {
			b := bases[rng.IntN(len(bases))]
			task := 0
			if b == "task" {
				task = rng.IntN(500) + 1
				if big && rng.IntN(10) == 0 {
					task += 1 << 28
				}
			}
			files = append(files, seriesFile{k: seriesKey{b, task}, rank: baseRank(b), n: rng.IntN(9) + 1, post: rng.IntN(2) == 0})
		}
		key := func(fs []seriesFile) [][3]int {
			out := make([][3]int, len(fs))
			for i, f := range fs {
				out[i] = [3]int{f.rank, f.k.task, f.n}
			}
			return out
		}
		got := append([]seriesFile(nil), files...)
		sortSeries(got)
		want := append([]seriesFile(nil), files...)
		for i := 1; i < len(want); i++ { // insertion sort by the same order, stable
			for j := i; j > 0 && less(want[j], want[j-1]); j-- {
				want[j], want[j-1] = want[j-1], want[j]
			}
		}
		if diff := cmp.Diff(key(want), key(got)); diff != "" {
			t.Errorf("big=%v: sortSeries order (+) vs the comparison (-):\n%s", big, diff)
		}
	}
}

func less(a, b seriesFile) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if a.k.task != b.k.task {
		return a.k.task < b.k.task
	}
	return a.n < b.n
}
