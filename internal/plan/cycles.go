package plan

import "slices"

// Cycles finds the dependency cycles of a graph of nodes 0…n-1: one per
// group of nodes that wait on each other (a strongly connected component,
// Tarjan's algorithm), the shortest cycle through the group's least node
// (by less), from it back to it, breadth-first inside the group. deps(v)
// lists the nodes v depends on; a node is a root of the search only when
// include(v) (duplicate rows are left out). The cycles are ordered by
// their first node.
func Cycles(n int, deps func(v int) []int, include func(v int) bool, less func(a, b int) bool) [][]int {
	index, low := make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	var stack []int
	var out [][]int
	next := 1
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range deps(v) {
			switch {
			case index[w] == 0:
				visit(w)
				low[v] = min(low[v], low[w])
			case onStack[w]:
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		if c := cycleThrough(comp, deps, less); c != nil {
			out = append(out, c)
		}
	}
	for v := range n {
		if include(v) && index[v] == 0 {
			visit(v)
		}
	}
	slices.SortFunc(out, func(a, b []int) int {
		switch {
		case less(a[0], b[0]):
			return -1
		case less(b[0], a[0]):
			return 1
		}
		return 0
	})
	return out
}

// cycleThrough returns the shortest cycle through the component's least
// node, nil for a single node that does not depend on itself.
func cycleThrough(comp []int, deps func(v int) []int, less func(a, b int) bool) []int {
	start := comp[0]
	in := make(map[int]bool, len(comp))
	for _, v := range comp {
		in[v] = true
		if less(v, start) {
			start = v
		}
	}
	prev := map[int]int{}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range deps(v) {
			if !in[w] {
				continue
			}
			if w == start {
				var rev []int
				for x := v; x != start; x = prev[x] {
					rev = append(rev, x)
				}
				c := []int{start}
				for i := len(rev) - 1; i >= 0; i-- {
					c = append(c, rev[i])
				}
				return append(c, start)
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return nil
}
