// Package snapshot defines the Snapshot document, sentinel's read-only view of
// the cluster objects that judging a drain needs, and the pure functions over
// it (the node-scope closure, streaming encoding). It does not talk to a
// cluster, so offline readers such as k8s-analyze link no client transport;
// package take fills a Snapshot from a cluster.
package snapshot
