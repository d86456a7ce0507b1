package analyze

// NeverReasons are the reasons of the causes a drain forecast gives for a
// verdict of never (ForecastCause.Reason under VerdictNever), as CHECKS.md
// lists them. A MaintenancePlan's spec.acceptedRisks may name them, beside
// the High finding codes: maintd then starts a drain whose forecast is never
// only for those causes, which a person knows will clear (the room an
// autoscaler adds for the replacements).
func NeverReasons() []string {
	return []string{ReasonPDBOverlap, ReasonPDBNeverAllows, ReasonPDBNeverRefills, ReasonUnschedulable, ReasonNoCapacity}
}
