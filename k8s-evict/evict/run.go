package evict

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodClient reads, lists and watches the pods of one namespace; the typed
// client's CoreV1().Pods(namespace) satisfies it.
type PodClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Pod, error)
	Pods
}

// Budgets lists the PodDisruptionBudgets of one namespace; the typed
// client's PolicyV1().PodDisruptionBudgets(namespace) satisfies it.
type Budgets interface {
	List(ctx context.Context, opts metav1.ListOptions) (*policyv1.PodDisruptionBudgetList, error)
}

// Deps are what Run talks to, each scoped to the request's namespace.
type Deps struct {
	// Poster sends the one eviction request.
	Poster Poster
	// Pods reads the pod before the eviction (when the request has a UID,
	// or to learn it for Options.Wait), waits for it to be gone, and
	// reads it to name the PDBs after a pdb-overlap answer. It is
	// required when the request has a UID or Options.Wait is positive.
	Pods PodClient
	// Budgets names the PDBs after a pdb-overlap answer; nil (or a nil
	// Pods) leaves them unnamed.
	Budgets Budgets
}

// Options tune Run.
type Options struct {
	// Timeout bounds each request before the wait: the read of the pod,
	// the eviction, the reads that name overlapping PDBs (0: ctx alone).
	Timeout time.Duration
	// Wait, when positive, waits up to Wait after an accepted eviction
	// (not a dry run) for the pod with that UID to be gone: Result.Gone,
	// or the outcome accepted-not-gone.
	Wait time.Duration
}

// Run evicts the pod req names, with at most one eviction request, and
// says what came of it.
//
// When req has a UID, or Options.Wait asks to wait, the pod is read first.
// A pod that is not there, or that has another UID than req's, is the
// outcome gone (reason not-found or replaced) and NO eviction is sent: a
// failed UID precondition still spends the PDB's budget for up to two
// minutes. Otherwise the UID read is sent as the precondition, so that a
// pod re-created between the read and the eviction is not evicted.
//
// Then Pod sends the eviction and classifies the answer. An accepted
// eviction is followed, with Options.Wait, by WaitGone; a pdb-overlap
// answer by two reads (the pod unless already read, the namespace's PDBs)
// that name the PDBs selecting the pod, best effort: when they fail, the
// message says why the names are missing.
//
// An error means no eviction reached the API server: the pod could not be
// read, or the request could not be sent (see Pod). An eviction sent whose
// answer was lost is the outcome unknown, not an error.
func Run(ctx context.Context, deps Deps, req Request, opts Options) (*Result, error) {
	wait := opts.Wait > 0 && !req.DryRun
	var pod *corev1.Pod
	if req.UID != "" || wait {
		if deps.Pods == nil {
			return nil, errors.New("evict: reading the pod needs a pod client")
		}
		var err error
		if pod, err = read(ctx, deps.Pods, req, opts.Timeout); err != nil {
			return nil, err
		}
		if res, ok := Check(req, pod); !ok {
			return res, nil
		}
		req.UID = pod.UID
	}

	postCtx, cancel := bound(ctx, opts.Timeout)
	res, err := Pod(postCtx, deps.Poster, req)
	cancel()
	if err != nil {
		return nil, err
	}
	switch {
	case res.Outcome == Accepted && wait:
		waitGone(ctx, deps.Pods, res, opts.Wait)
	case res.Outcome == PDBOverlap && deps.Pods != nil && deps.Budgets != nil:
		overlapping(ctx, deps, pod, res, opts.Timeout)
	}
	return res, nil
}

// Check compares req with its pod as read (nil: not found) before any
// eviction is sent. ok is false when the eviction must not be sent: the
// pod is not there, or req has a UID and the pod under that name has
// another one; res is then the outcome gone, reason not-found or replaced,
// without an HTTP status (nothing was asked of the Eviction API). A caller
// that reads pods from an informer cache, e.g. maintd, calls Check with
// the cached pod and Pod only when ok.
func Check(req Request, pod *corev1.Pod) (res *Result, ok bool) {
	switch {
	case pod == nil:
		res = NewResult(req.Namespace, req.Name)
		res.UID, res.DryRun = req.UID, req.DryRun
		res.Outcome, res.Reason = Gone, ReasonNotFound
		res.Message = fmt.Sprintf("pod %s/%s not found: nothing to evict, no eviction sent", req.Namespace, req.Name)
		return res, false
	case req.UID != "" && pod.UID != req.UID:
		res = NewResult(req.Namespace, req.Name)
		res.UID, res.DryRun = req.UID, req.DryRun
		res.Outcome, res.Reason = Gone, ReasonReplaced
		res.Message = fmt.Sprintf("pod %s/%s is now uid %s, not %s: the pod asked for is gone, no eviction sent", req.Namespace, req.Name, pod.UID, req.UID)
		return res, false
	}
	return nil, true
}

// read is the pod req names, nil when it is not found.
func read(ctx context.Context, pods PodClient, req Request, timeout time.Duration) (*corev1.Pod, error) {
	ctx, cancel := bound(ctx, timeout)
	defer cancel()
	pod, err := pods.Get(ctx, req.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read pod %s/%s: %w", req.Namespace, req.Name, err)
	}
	return pod, nil
}

// waitGone waits for the evicted pod to be gone and records what it saw.
func waitGone(ctx context.Context, pods Pods, res *Result, wait time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	err := WaitGone(ctx, pods, res.Pod, res.UID)
	switch {
	case err == nil:
		res.Gone = true
		res.Message = "evicted: the pod is gone"
	case errors.Is(err, context.DeadlineExceeded):
		res.Outcome, res.Reason = AcceptedNotGone, ReasonWaitTimeout
		res.Message = fmt.Sprintf("eviction accepted, but the pod was still there after %s", wait)
	default:
		res.Outcome, res.Reason = AcceptedNotGone, ""
		res.Message = fmt.Sprintf("eviction accepted, but waiting for the pod failed: %v", err)
	}
}

// overlapping names the PDBs behind a pdb-overlap answer, best effort:
// the pod (unless read before) and the namespace's PDBs are read; when
// either read fails, the answer stays as it is and the message says why
// the names are missing.
func overlapping(ctx context.Context, deps Deps, pod *corev1.Pod, res *Result, timeout time.Duration) {
	ctx, cancel := bound(ctx, timeout)
	defer cancel()
	if pod == nil {
		p, err := deps.Pods.Get(ctx, res.Pod, metav1.GetOptions{})
		if err != nil {
			res.Message += fmt.Sprintf(" (the PDBs could not be named: %v)", err)
			return
		}
		pod = p
	}
	list, err := deps.Budgets.List(ctx, metav1.ListOptions{})
	if err != nil {
		res.Message += fmt.Sprintf(" (the PDBs could not be named: %v)", err)
		return
	}
	res.PDBs = Overlapping(pod, list.Items)
	if len(res.PDBs) > 0 {
		res.Message += " PDBs selecting the pod: " + strings.Join(res.PDBs, ", ") + "."
	}
}

// bound is ctx with timeout, or ctx alone when timeout is not positive.
func bound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, timeout)
}
