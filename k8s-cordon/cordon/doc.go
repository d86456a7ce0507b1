// Package cordon marks a node unschedulable on behalf of a named owner, and
// releases it only for that owner.
//
// The package has two parts. Decide is pure: given the node as read and the
// request, it says what to do (an Outcome) and, when a write is needed, a
// JSON merge patch of spec.unschedulable and the annotations that carries
// the resourceVersion the node was read at. Apply is the thin I/O shell
// around it: read, decide, at most one Patch guarded by that
// resourceVersion, then a read back that sets Result.Observed. A patch
// sends only the fields it sets, so fields newer than this client are never
// dropped, as a full-object Update would drop them. A conflict (409)
// re-reads and decides again, a bounded number of times; it never
// overwrites blindly.
//
// Ownership is recorded on the Node in three annotations: OwnerAnnotation,
// ReasonAnnotation and CordonedAtAnnotation. A node cordoned by anyone else,
// with or without an owner annotation, is never taken over and never
// uncordoned.
package cordon
