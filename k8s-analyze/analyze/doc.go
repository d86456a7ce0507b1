// Package analyze grades the drain risk of nodes from a Snapshot, offline.
//
// It is pure: a Snapshot and a time in, a Report out. It never contacts a
// cluster (a test fails if it imports client-go's transport). Every finding
// has a stable code whose severity and fix hint the code owns (Checks,
// CHECKS.md); a node's risk is its worst finding's severity. Per pod it
// predicts the exact answer of the Eviction API (EvictableNow). With
// Options.Forecast, every node also gets a drain forecast: how long until
// its evictable pods are gone (p50, p90), its critical path, and whether the
// drain can finish at all (ok, never, unknown), replacements placed on the
// other nodes as the scheduler's filters would (docs/design.md, "Drain
// forecast"). Where they may go is read from the snapshot itself, or from
// a placement model of the whole cluster made once (NewPlacement) and
// shared by the forecasts and capacity checks of many snapshots, node-scoped
// ones included (ForecastOptions.Placement, Placement.Capacity).
package analyze
