// Maintd runs MaintenancePlans and MaintenanceCampaigns: it takes nodes out
// for maintenance the way an expert would by hand, and stops for a person,
// with the exact reason, whenever the cluster says no.
//
// A MaintenancePlan (maintenance.sentinel.dev/v1alpha1, cluster-scoped,
// short name mp) names a node, the workloads whose pods may be evicted (or
// allowAllWorkloads), the finding codes a person accepts, and a deadline.
// For each plan maintd:
//
//  1. checks before any write: the node exists and is not cordoned by
//     someone else, no other plan owns it, every pod to evict belongs to an
//     allowed workload, and no pod has a High drain-risk finding (the
//     checks of k8s-analyze, run on the informer caches) that the plan does
//     not accept; a slot is free (--max-nodes-in-maintenance);
//  2. cordons the node with an owner annotation that carries the plan's
//     UID, and reads it back;
//  3. evicts the pods through the Eviction API only when the caches say the
//     pod's PodDisruptionBudget allows one more disruption now, with the
//     pod's UID checked against the cache first and sent as a precondition;
//     a refusal (429) starts a cooldown for that PDB alone, which ends when
//     the PDB's status allows again (an event, not a timer) or after
//     maxCooldown; Retry-After is honoured;
//  4. reports Drained once every allowed pod is gone, and keeps the node
//     cordoned until spec.release is set; then uncordons it (only if the
//     owner annotation is still this plan's) and completes.
//
// With spec.surge: IfNeeded, a pod whose PodDisruptionBudget never allows
// its eviction (one replica under minAvailable: 1) is moved with no
// downtime: one more replica of its Deployment first, the eviction once the
// new pod is Ready, then the replica count restored, once.
//
// A MaintenanceCampaign (short name mc) takes a set of nodes (a list or a
// node selector) out together, each pod moved once: before any write it
// checks that the nodes left schedulable can take the pods to move
// (insufficient-capacity otherwise), then makes one plan per node, owned by
// it, a wave as large as the free slots at a time; a wave's plans all
// cordon before any of them evicts, and the PodDisruptionBudgets set the
// pace across them. spec.release releases each node as it is drained. Its
// breaker pauses it (condition Paused, maintd_campaign_paused) while more
// nodes outside it than breaker.maxNotReadyNodes are NotReady, a pod it
// moved is not Ready after breaker.podReadyTimeout, or budgets of its
// namespaces are below their floor, and resumes it once the cause has been
// clear for breaker.holdDown.
//
//	kubectl get mc                          phase, reason, wave, drained/nodes, paused
//
// The cluster-wide pause switch is a ConfigMap (--pause-configmap,
// default maintd-system/maintd-pause): while it exists no plan cordons,
// evicts or surges and no campaign starts a wave (reason paused, condition
// Paused, maintd_paused 1), and
// its data.reason is shown; deleting it resumes them.
//
//	kubectl create configmap maintd-pause -n maintd-system --from-literal=reason='incident 4711'
//	kubectl delete configmap maintd-pause -n maintd-system
//
// Every intent is written to the plan's status before the request it
// announces, so a restarted maintd resumes where it stopped: no pod is
// evicted twice, the deadline and any cooldown survive. Deleting a plan
// lifts its cordon (a finalizer) and leaves any other owner's cordon alone.
//
// Phases and reasons are in status.phase/status.reason and the last 20
// transitions in status.history:
//
//	kubectl get mp                          node, phase, reason, evicted/total
//	kubectl get mp NAME -o jsonpath='{.status.history}'
//
// --metrics-address serves /metrics (maintd_plans by phase,
// maintd_plan_phase, maintd_plan_evicted_pods and maintd_plan_pods per
// plan, maintd_evictions_total by outcome, maintd_cooldown_seconds by reason,
// maintd_reconcile_duration_seconds, maintd_workqueue_*,
// maintd_api_requests_total by code, maintd_leader, maintd_paused,
// maintd_campaign_paused, Go and process metrics), /healthz and /readyz, and with --profiling Go's profiles
// (/debug/pprof/). With --leader-elect several replicas run
// and only the holder of a coordination.k8s.io Lease reconciles; the others
// stand by (maintd_leader 0) and one takes over within the lease duration
// when the leader dies.
//
// Events (events.k8s.io) go to the plan for every step, to the node for
// each cordon and uncordon, and to each evicted pod, naming the plan and
// the PodDisruptionBudget that allowed the eviction.
//
// In a cluster: kubectl apply -k maintd/deploy --server-side (the CRDs, a
// ServiceAccount with least privilege, two replicas with leader election);
// docs/maintd.md in the repository describes it.
//
// SIGINT or SIGTERM lets the calls in flight finish, releases the lease (the
// next leader starts at once), then exits 0.
package main
