// Kubectl-maint is maintd's front door, the kubectl plugin "kubectl maint":
// one command drains a node through a MaintenancePlan and shows it
// happening, as kubectl drain and kubectl rollout status do.
//
// kubectl finds kubectl-maint on PATH and runs it as "kubectl maint"; make
// build puts it, and kubectl_complete-maint (kubectl's plugin completion,
// so that "kubectl maint <TAB>" completes verbs, flags, node and plan
// names), in bin/. maintd must run in the cluster (or beside it) to do the
// work: kubectl-maint only creates, follows, releases and shows plans, and
// lists a campaign's nodes to retry.
//
// Verbs:
//
//	drain      create a plan for NODE and follow it until Drained, Blocked or Failed;
//	           for NODE NODE... or -l SELECTOR, a campaign, followed as a whole
//	uncordon   release NODE's plan, follow it to Completed, delete it (a
//	           campaign's is kept); delete a Failed plan, which maintd never
//	           releases, lifting its cordon
//	status     the pause switch, the campaigns and the plans on one screen, or
//	           one in detail; -w follows it
//	preflight  what a plan for NODE would do, judged now, writing nothing
//	retry      drain nodes of a campaign again: list them in its spec.retry
//	override   break-glass: a second person lets maintd delete a plan's pods
//	           that no PodDisruptionBudget lets it evict (MaintenanceOverride)
//	verify     replay the API server's audit log against the plans' ledgers
//	pause      set maintd's pause switch (every plan and campaign holds), with a reason
//	resume     lift it
//
// "kubectl maint VERB --help" shows each verb's options. Flags may follow
// the verb's arguments. Progress goes to stderr: the steps of the plan's
// status.history as lines and, when stderr is a terminal (not TERM=dumb)
// and there is no -o, a live view redrawn below them. stdout gets the
// answer: a line, or the plan with -o json|yaml.
//
// Shell completion: source <(kubectl-maint completion bash) (or zsh)
// completes kubectl-maint; with kubectl_complete-maint on PATH, kubectl's
// own completion completes "kubectl maint".
package main
