package state

import "testing"

// BenchmarkRoundTrip reads state.json and writes it back atomically under
// the plan lock, as every state-changing command does.
func BenchmarkRoundTrip(b *testing.B) {
	dir := b.TempDir()
	if err := Save(dir, New()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := update(dir, func(s *State) error { s.ConsecutiveClean ^= 1; return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
