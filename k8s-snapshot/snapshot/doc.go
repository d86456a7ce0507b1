// Package snapshot defines the Snapshot document, sentinel's read-only view of
// the cluster objects that judging a drain needs, and takes it from a cluster.
package snapshot
