package snapshot

// What the external tests (package snapshot_test) need of the internals.

const ChunkSize = chunkSize

// HasOwner reports whether s holds the owner group/kind namespace/name, as
// the owner chains of ForNodes look it up.
func HasOwner(s *Snapshot, group, kind, namespace, name string) bool {
	_, ok := owners(s)[ref{group, kind, namespace, name}]
	return ok
}
