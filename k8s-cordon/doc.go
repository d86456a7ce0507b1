// K8s-cordon cordons a node on behalf of a named owner, or releases that
// owner's cordon, with one guarded write, and prints a CordonResult.
//
// Cordon reads the node, checks its UID when --expect-uid is given, decides,
// and sends at most one JSON merge patch carrying the resourceVersion it
// read: it sets spec.unschedulable and the annotations
// maintenance.sentinel.dev/cordon-owner, .../cordon-reason and
// .../cordoned-at, and nothing else, so fields of the node that this
// client does not know are kept. It then reads the node back; "observed" is true only
// when that read shows the change. A conflict (409) means the node changed
// in between: the node is read again and the decision made again (at most
// 5 times); nothing is ever overwritten blindly.
//
// A node cordoned by anyone else is never taken over: with another owner's
// annotation, or cordoned without any owner annotation (kubectl cordon),
// the answer is "occupied" and nothing is written. --uncordon clears
// spec.unschedulable and the three annotations in one patch, and only
// when the owner annotation is --owner's; it never lifts a foreign cordon.
//
// The CordonResult document (apiVersion sentinel.dev/v1alpha1) holds node,
// nodeUID, action, owner, previousOwner, reason, cordonedAt, unschedulable,
// observed, resourceVersion, conflicts and message. action is one of:
//
//	cordoned       the node was cordoned for --owner                  exit 0
//	already-owned  already cordoned by --owner; nothing written       exit 0
//	occupied       cordoned or claimed by someone else; no write      exit 3
//	uid-mismatch   the node's UID is not --expect-uid; no write       exit 3
//	uncordoned     --owner's cordon was released                      exit 0
//	not-cordoned   --uncordon found nothing to release; no write      exit 0
//	not-owner      --uncordon of a cordon --owner did not set         exit 3
//
// For exit 3 the message is also printed on stderr. Exit 1 is an error:
// bad flags, an unknown node, an unreachable or refusing API server, or a
// write that could not be read back; nothing reliable was done and, except
// for the last case, nothing is printed on stdout.
//
// Permissions: get and patch on nodes (the manual links the ClusterRole
// that grants exactly these).
package main
