/**
 * catalog-reschedule: the pure decision (olm-facts §3). A CatalogSource's registry pod on a node
 * that is gone keeps the catalog down: OLM (< v0.29, and at HEAD for pods Terminating without
 * DisruptionTarget) still counts it as the current pod. Force-delete it (grace 0, uid precondition)
 * so OLM recreates it elsewhere — but only once the node has been NotReady for longer than the
 * fence, or is marked out-of-service, or the pod carries DisruptionTarget=True. Never a pod on a
 * Ready node; never a pod that is not provably the CatalogSource's serving pod.
 */
import type { Action, Plan, PlanContext, Target } from '../../shared/core/types.js';
import { soonest, target } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { LABEL_CATALOG_SOURCE, V1ALPHA1 } from '../../shared/olm/constants.js';
import { condition, latestOf, managedWriteTime, seconds } from '../../shared/olm/olm.js';

export interface PodFacts {
  pod: KubeObject;
  /** The CatalogSource named by the pod's label, if it exists. */
  catalogSource?: KubeObject;
}

export interface Observed {
  nodeName: string;
  /** undefined: the node object no longer exists. */
  node?: KubeObject;
  /** When olm-medic first saw the node missing (seconds, apiserver clock); set only when `node` is undefined. */
  nodeMissingSince?: number;
  pods: PodFacts[];
}

export const defaults = {
  /** Added to the pod's toleration seconds (or the 300 s default) before acting. */
  fenceMarginSeconds: 30,
  /** How long to leave a DisruptionTarget pod to OLM (v0.29+ deletes those itself) first. */
  olmGraceSeconds: 60,
  /**
   * A node that is gone may re-register, and Kubernetes' PodGC deletes the pods of a deleted node
   * itself, 40-60 s after (its 40 s quarantine, checked every 20 s: pkg/controller/podgc): wait this
   * long after first seeing the node missing, so Kubernetes' own fix goes first and olm-medic acts
   * only where it does not run.
   */
  nodeGoneQuarantineSeconds: 90,
};

const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
const DEFAULT_TOLERATION = 300;

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}
interface Taint {
  key?: string;
  value?: string;
  effect?: string;
  timeAdded?: string;
}

/**
 * Kubernetes' ToleratesTaint (k8s.io/api core/v1 toleration.go): effect and key empty or equal, and
 * operator Exists, or Equal (or none) with the taint's value; any other operator tolerates nothing.
 * A toleration whose key and effect fit but whose value does not is no toleration (red team 28b, T1).
 */
function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  if (!t.operator || t.operator === 'Equal') return (t.value ?? '') === (taint.value ?? '');
  return false;
}

/** Why this is not provably a CatalogSource serving pod (undefined: it is). */
export function identityProblem(f: PodFacts): string | undefined {
  const name = f.pod.metadata.labels?.[LABEL_CATALOG_SOURCE];
  if (!name) return 'no olm.catalogSource label (or an update pod)';
  const ctrl = f.pod.metadata.ownerReferences?.find((o) => o.controller === true);
  if (!ctrl || ctrl.kind !== 'CatalogSource' || ctrl.apiVersion !== V1ALPHA1 || ctrl.name !== name) return `not controlled by CatalogSource ${name}`;
  if (!f.catalogSource) return `CatalogSource ${name} no longer exists`;
  if (f.catalogSource.metadata.uid !== ctrl.uid) return `CatalogSource ${name} was recreated (uid differs)`;
  return undefined;
}

/**
 * When the node went not-Ready, and the fence that applies to this pod: the NoExecute toleration's
 * seconds for the node's taint (default 300 when the pod has none). A matching toleration WITHOUT
 * tolerationSeconds tolerates forever: such a pod is never fenced out by time (seconds: undefined).
 */
function fence(pod: KubeObject, node: KubeObject): { since?: number; seconds?: number; key: string; tainted: boolean } {
  const ready = condition(node, 'Ready');
  // Unknown = the node stopped reporting (unreachable); False = the kubelet says not ready.
  const key = ready?.status === 'False' ? 'node.kubernetes.io/not-ready' : 'node.kubernetes.io/unreachable';
  const tolerations = (pod.spec as { tolerations?: Toleration[] } | undefined)?.tolerations ?? [];
  const taint = ((node.spec as { taints?: Taint[] } | undefined)?.taints ?? []).find((t) => t.key === key && t.effect === 'NoExecute');
  // Taint eviction's rule (pkg/controller/tainteviction, GetMatchingTolerations): the FIRST toleration
  // that tolerates the taint decides; without tolerationSeconds it tolerates forever. None: the pod
  // would go at once, but DefaultTolerationSeconds admission gives every pod 300 s (the longer fence).
  const tol = tolerations.find((t) => t !== null && typeof t === 'object' && tolerates(t, taint ?? { key, effect: 'NoExecute' }));
  const secs = tol ? tol.tolerationSeconds : DEFAULT_TOLERATION;
  // Kubernetes counts a NoExecute toleration from when the control plane added the taint (its own
  // clock); the Ready transition may be written by the kubelet with the node's clock. The later wins.
  // Both may carry kube-controller-manager's clock, which taint eviction counts on (from when IT saw
  // the taint): bounded by the apiserver's stamp of the controller-manager's last spec write (the
  // taint; red team 32: a controller-manager 3 min behind made olm-medic act 130 s early).
  const times = [seconds(ready?.lastTransitionTime), seconds(taint?.timeAdded)].filter((x): x is number => x !== undefined);
  if (times.length && taint) times.push(managedWriteTime(node, 'spec', 'kube-controller-manager') ?? times[0]!);
  return { ...(times.length ? { since: Math.max(...times) } : {}), ...(secs !== undefined ? { seconds: Math.max(0, secs) } : {}), key, tainted: taint !== undefined };
}

/** While a node is gone: how often it is looked at again (a look that sees it back ends the wait). */
export const NODE_GONE_RECHECK_SECONDS = 15;
/** While a not-Ready node has no NoExecute taint yet: how often it is looked at again. */
export const NO_TAINT_RECHECK_SECONDS = 30;

type PodDecision = { act: Action } | { wait: number; why: string } | { defer: string; wait: number } | { skip: string };

export function decidePod(f: PodFacts, o: Observed, ctx: PlanContext): PodDecision {
  const now = ctx.now.getTime() / 1000;
  const margin = Number(ctx.options.fenceMarginSeconds ?? defaults.fenceMarginSeconds);
  const olmGrace = Number(ctx.options.olmGraceSeconds ?? defaults.olmGraceSeconds);
  const problem = identityProblem(f);
  if (problem) return { skip: problem };
  const pod = f.pod;
  if ((pod.spec as { nodeName?: string } | undefined)?.nodeName !== o.nodeName) return { skip: 'not on this node' };

  const node = o.node;
  const ready = node ? condition(node, 'Ready') : undefined;
  if (node && ready?.status === 'True') return { skip: `node ${o.nodeName} is Ready` };

  const disruption = condition(pod, 'DisruptionTarget');
  const outOfService = (node?.spec as { taints?: { key?: string }[] } | undefined)?.taints?.some((t) => t.key === OUT_OF_SERVICE);
  let why: string | undefined;
  if (!node) {
    const quarantine = Number(ctx.options.nodeGoneQuarantineSeconds ?? defaults.nodeGoneQuarantineSeconds);
    const since = o.nodeMissingSince ?? now;
    // Looked at again every NODE_GONE_RECHECK_SECONDS meanwhile: a look that sees the node back ends the wait.
    if (now < since + quarantine) return { wait: Math.min(NODE_GONE_RECHECK_SECONDS, Math.ceil(since + quarantine - now)), why: `node ${o.nodeName} is gone; waiting ${quarantine}s in case it re-registers` };
    why = `node ${o.nodeName} no longer exists (missing for over ${quarantine}s)`;
  } else if (outOfService) why = `node ${o.nodeName} is tainted ${OUT_OF_SERVICE}`;
  // DisruptionTarget is evidence only with the delete it announces: it is written before the delete
  // (taint eviction, preemption, the eviction API) and stays if that fails, and node-pressure
  // eviction never deletes at all; such a pod is fenced like any other (red team 37).
  else if (disruption?.status === 'True' && pod.metadata.deletionTimestamp) {
    // The condition carries taint eviction's clock; the delete that follows it is stamped by the
    // apiserver (deletionTimestamp minus the grace it was asked with): the later counts (red team 32).
    const grace = pod.metadata.deletionGracePeriodSeconds;
    const deleteAsked = seconds(pod.metadata.deletionTimestamp) !== undefined && typeof grace === 'number' ? seconds(pod.metadata.deletionTimestamp)! - grace : undefined;
    const since = latestOf(seconds(disruption.lastTransitionTime), deleteAsked) ?? now;
    if (now < since + olmGrace) {
      return { defer: `pod has DisruptionTarget=True (${disruption.reason ?? ''}); OLM v0.29+ force-deletes such pods itself`, wait: Math.ceil(since + olmGrace - now) };
    }
    why = `pod has DisruptionTarget=True (${disruption.reason ?? 'unknown reason'}) on not-Ready node ${o.nodeName}`;
  } else {
    const f2 = fence(pod, node);
    // Kubernetes counts a toleration from its NoExecute taint; until the control plane adds it (rate
    // limited; never during a zone's full disruption) it evicts nothing, and a Ready transition alone
    // may carry a kubelet's skewed clock (red team 12, Q3): wait for the taint.
    if (f2.since === undefined) return { skip: `node ${o.nodeName} has no Ready transition time; cannot fence` };
    if (!f2.tainted) return { wait: NO_TAINT_RECHECK_SECONDS, why: `node ${o.nodeName} is not Ready but has no ${f2.key}:NoExecute taint yet: Kubernetes has not started the toleration clock` };
    if (f2.seconds === undefined) return { skip: `pod tolerates ${f2.key} forever (no tolerationSeconds): only a node that is gone or out-of-service fences it out` };
    const expires = f2.since + f2.seconds + margin;
    if (now < expires) return { wait: Math.ceil(expires - now), why: `node ${o.nodeName} not Ready for ${Math.round(now - f2.since)}s; fence is ${f2.seconds + margin}s` };
    why = `node ${o.nodeName} has not been Ready for ${Math.round(now - f2.since)}s, past the ${f2.key} toleration (${f2.seconds}s) plus ${margin}s`;
  }
  const terminating = pod.metadata.deletionTimestamp ? 'stuck Terminating' : 'not Terminating';
  const t: Target = target(pod);
  return {
    act: {
      verb: 'delete',
      target: t,
      // Each pod is independent: an opted-out catalog or a protected namespace never holds back the others.
      optional: true,
      gracePeriodSeconds: 0,
      regarding: target(f.catalogSource!),
      reason: 'CatalogPodForceDeleted',
      note: `Force-deleted catalog pod ${pod.metadata.name} (${terminating}): ${why}. OLM recreates it on a healthy node.`,
    },
  };
}

export function plan(o: Observed, ctx: PlanContext): Plan {
  const actions: Action[] = [];
  const waits: number[] = [];
  let defer: { note: string; wait: number; pod: KubeObject } | undefined;
  const skips: string[] = [];
  for (const f of o.pods) {
    const d = decidePod(f, o, ctx);
    if ('act' in d) actions.push(d.act);
    // The soonest hand-off to OLM ends first: that is when to look again.
    else if ('defer' in d) defer = defer && defer.wait <= d.wait ? defer : { note: d.defer, wait: d.wait, pod: f.pod };
    else if ('wait' in d) waits.push(d.wait);
    else skips.push(`${f.pod.metadata.name}: ${d.skip}`);
  }
  if (actions.length) {
    // The pods still inside their fence (or handed to OLM) are looked at again when due, whatever
    // becomes of these deletes (policy may refuse every one of them).
    const again = soonest([...waits, defer?.wait]);
    return { kind: 'act', actions, summary: `force-deleted ${actions.length} catalog pod(s) on ${o.nodeName}`, ...(again ? { othersRecheckAfterSeconds: again } : {}) };
  }
  if (defer) return { kind: 'defer', reason: 'DeferredToOlm', note: defer.note, regarding: target(defer.pod), requeueAfterSeconds: defer.wait };
  if (waits.length) return { kind: 'requeue', afterSeconds: Math.min(...waits), reason: 'inside the node-loss fence' };
  return { kind: 'noop', reason: skips.join('; ') || `no catalog pods on ${o.nodeName}` };
}
