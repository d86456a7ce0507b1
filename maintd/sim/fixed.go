package sim

// Fixed are seeds that broke a promise before a fix of this package's
// first session, with what they found; they run in make test. Windows
// and health gates, drawn after them, are not drawn for them.
var Fixed = map[int64]string{
	1:  "a preflight finding naming each snapshot's capture time rewrote a Blocked plan's status on every re-check",
	2:  "the same, for a plan Blocked on overlapping PDBs",
	4:  "the same, while cooling down on a budget",
	7:  "a dry run with nothing to evict recorded an empty answer set: two writes per generation",
	9:  "finalize trusted the cache: after a lost answer to the uncordon, a deleted plan left its cordon on the node",
	10: "a dry run was repeated every maxCooldown while nothing changed",
	11: "a budget's cooldown lifted on its timer alone: budget-recovered, then pdb-budget-exhausted again, while nothing changed",
	// The campaigns'.
	611: "the deadline invariant timed a drain from a start finer than the second the API records (a campaign's requeue started one between two seconds)",
	337: "after a refused eviction the next look restated the wait in other words: the status written again while nothing changed",
	147: "a plan whose campaign was deleted (its plans not yet collected) evicted before the rest of its wave had cordoned",
	899: "a campaign failed its deadline in the reconcile that opened its breaker: final, never decided again, it held its plans paused forever",
	// The declared waits' (a plan or campaign at rest that would decide
	// otherwise: a lost wake-up).
	81:  "a high-risk finding that cleared as pods elsewhere became Ready woke no Blocked plan",
	976: "an owner's spec change (a surge restored) woke no plan whose finding it cleared",
	311: "a campaign's deadline timer, counted from the decision's time in whole seconds, fired up to a second late",
	193: "a throttle's end recorded rounded down: a plan evicted up to a second before the Retry-After ended",
	// Concurrent workers'.
	720: "an eviction decided before another worker's throttling 429 was sent within its Retry-After",
	143: "two workers' plans surged the same owner; then a campaign's breaker timer on a pod's creation time looped every nanosecond",
	52:  "a dry run's finding that came as pods moved elsewhere woke no plan",
	// The lifecycle's.
	122: "a plan deleted with its finalizer removed (as a restore from backup loses it) left its cordon on the node and its surge on the owner forever",
	// The volumes'.
	927: "a storage provider evicted while a consumer of its driver's volumes was still Terminating on the node (a consumer Pending on a Multi-Attach, never attached there, evicted: its drain group counted no pod left)",
	// Break-glass's.
	42:  "a plan kept past its deadline by an override asked to decide again at its deadline, in the past: every nanosecond; and started a surge again after each restore",
	69:  "a plan past its deadline that stopped before its evictions (its node uncordoned by a person) waited for an override's deletion that woke nothing; now it fails as without overrides",
	124: "a dry run past its deadline with an override never failed",
	186: "a plan failed its deadline while cordoning, its cordon landed but not yet cached: the slot counted free and another plan decided to cordon (2 nodes, 1 slot)",
	245: "a spent override's expiry rewrote its Blocked plan's status (spent, then expired) while nothing else changed",
	907: "the same for an override spent for one budget",
	67:  "a campaign made its next wave on a plan's end that was decided and not yet written",
	917: "a campaign plan's first eviction, decided while another plan of its wave was Blocked and never answered, was sent after a pause said over that block (the gate now opens at the first accepted eviction)",
	// The drain rules'.
	45: "a pod of order 0 evicted while a pod its plan's drain rules put first (order -2) was still Terminating on the node",
}
