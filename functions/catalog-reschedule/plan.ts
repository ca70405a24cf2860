/**
 * catalog-reschedule: the pure decision (olm-facts §3). A CatalogSource's registry pod on a node
 * that is gone keeps the catalog down: OLM (< v0.29, and at HEAD for pods Terminating without
 * DisruptionTarget) still counts it as the current pod. Force-delete it (grace 0, uid precondition)
 * so OLM recreates it elsewhere — but only once the node has been NotReady for longer than the
 * fence, or is marked out-of-service, or the pod carries DisruptionTarget=True. Never a pod on a
 * Ready node; never a pod that is not provably the CatalogSource's serving pod.
 */
import type { Action, Plan, PlanContext, Target } from '../../shared/core/types.js';
import { target } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { LABEL_CATALOG_SOURCE, MEDIC, V1ALPHA1 } from '../../shared/olm/constants.js';
import { condition, seconds } from '../../shared/olm/olm.js';

export interface PodFacts {
  pod: KubeObject;
  /** The CatalogSource named by the pod's label, if it exists. */
  catalogSource?: KubeObject;
}

export interface Observed {
  nodeName: string;
  /** undefined: the node object no longer exists. */
  node?: KubeObject;
  pods: PodFacts[];
}

export const defaults = {
  /** Added to the pod's toleration seconds (or the 300 s default) before acting. */
  fenceMarginSeconds: 30,
  /** How long to leave a DisruptionTarget pod to OLM (v0.29+ deletes those itself) first. */
  olmGraceSeconds: 60,
};

const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
const DEFAULT_TOLERATION = 300;

interface Toleration {
  key?: string;
  effect?: string;
  tolerationSeconds?: number;
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

/** When the node went not-Ready, and the fence that applies to this pod. */
function fence(pod: KubeObject, node: KubeObject): { since?: number; seconds: number; key: string } {
  const ready = condition(node, 'Ready');
  // Unknown = the node stopped reporting (unreachable); False = the kubelet says not ready.
  const key = ready?.status === 'False' ? 'node.kubernetes.io/not-ready' : 'node.kubernetes.io/unreachable';
  const tol = ((pod.spec as { tolerations?: Toleration[] } | undefined)?.tolerations ?? []).find(
    (t) => t.key === key && (t.effect === 'NoExecute' || t.effect === undefined),
  );
  return { since: seconds(ready?.lastTransitionTime), seconds: tol?.tolerationSeconds ?? DEFAULT_TOLERATION, key };
}

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
  if (!node) why = `node ${o.nodeName} no longer exists`;
  else if (outOfService) why = `node ${o.nodeName} is tainted ${OUT_OF_SERVICE}`;
  else if (disruption?.status === 'True') {
    const since = seconds(disruption.lastTransitionTime) ?? now;
    if (pod.metadata.deletionTimestamp && now < since + olmGrace) {
      return { defer: `pod has DisruptionTarget=True (${disruption.reason ?? ''}); OLM v0.29+ force-deletes such pods itself`, wait: Math.ceil(since + olmGrace - now) };
    }
    why = `pod has DisruptionTarget=True (${disruption.reason ?? 'unknown reason'}) on not-Ready node ${o.nodeName}`;
  } else {
    const f2 = fence(pod, node);
    if (f2.since === undefined) return { skip: `node ${o.nodeName} has no Ready transition time; cannot fence` };
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
    else if ('defer' in d) defer ??= { note: d.defer, wait: d.wait, pod: f.pod };
    else if ('wait' in d) waits.push(d.wait);
    else skips.push(`${f.pod.metadata.name}: ${d.skip}`);
  }
  // The executor refuses a whole plan if any action touches an opted-out object, and OLM copies the
  // CatalogSource's annotations (the opt-out too) onto its pod: one opted-out catalog must not hold
  // back the others on the same node. Act on the rest first; the follow-up look then asks for the
  // opted-out ones alone, which the executor refuses with a Warning Event.
  const allowed = actions.filter((a) => !optedOut(a));
  if (allowed.length && allowed.length < actions.length) {
    return { kind: 'act', actions: allowed, requeueAfterSeconds: 1, summary: `force-deleted ${allowed.length} catalog pod(s) on ${o.nodeName}` };
  }
  if (actions.length) return { kind: 'act', actions, summary: `force-deleted ${actions.length} catalog pod(s) on ${o.nodeName}` };
  if (defer) return { kind: 'defer', reason: 'DeferredToOlm', note: defer.note, regarding: target(defer.pod), requeueAfterSeconds: defer.wait };
  if (waits.length) return { kind: 'requeue', afterSeconds: Math.min(...waits), reason: 'inside the node-loss fence' };
  return { kind: 'noop', reason: skips.join('; ') || `no catalog pods on ${o.nodeName}` };
}

function optedOut(a: Action): boolean {
  return [a.target, a.regarding].some((t) => (t as Target | undefined)?.annotations?.[MEDIC.optOut] === 'true');
}
