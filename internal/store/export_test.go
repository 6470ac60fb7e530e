package store

// SetFailWrite makes every write of the file store f to a path fn fails
// (relative to the repository root) fail with fn's error, as a full disk
// would; nil lets every write through again.
func SetFailWrite(f *Files, fn func(rel string) error) { f.failWrite = fn }
