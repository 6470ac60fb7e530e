package store

// SetFailWrite makes every write of the file store f to a path fn fails
// (relative to the repository root) fail with fn's error, as a full disk
// would; nil lets every write through again.
func SetFailWrite(f *Files, fn func(rel string) error) { f.failWrite = fn }

// SetSmallPlan sets the most tasks of a plan listed whole at once, for a
// test; it returns the old value.
func SetSmallPlan(n int) int { old := smallPlan; smallPlan = n; return old }

// SetParallelRead sets the fewest files read with two readers, for a
// test; it returns the old value.
func SetParallelRead(n int) int { old := parallelRead; parallelRead = n; return old }
