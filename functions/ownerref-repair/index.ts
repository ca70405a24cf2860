/**
 * ownerref-repair — an InstallPlan misses the ownerReference to a Subscription that uses it (olm-facts §2).
 *   listens   InstallPlan add/update, Subscription add/update with status.installPlanRef, sweeps
 *   reads     the InstallPlan, the Subscriptions in its namespace (for a Subscription's event: the
 *             plan the event names — alone if it holds the event's claim — else that Subscription
 *             live and its plan, and the namespace's only if its own part is missing; in a burst of
 *             Subscription events, a recent metadata list of all plans instead of the first GET)
 *   writes    one merge patch of InstallPlan metadata (ownerReferences, component label) with a
 *             resourceVersion precondition
 */
import type { ResourceTrigger } from '../../shared/events/types.js';
import { NO_POLICY, type ObserveContext, type RemediationFunction, type SweepScope, type TargetRef } from '../../shared/core/types.js';
import type { KubeObject, Reader, Ref } from '../../shared/kube/types.js';
import { collect } from '../../shared/kube/collect.js';
import { isDnsSubdomain } from '../../shared/kube/validate.js';
import { ANN_GENERATED_BY, MEDIC, V1ALPHA1 } from '../../shared/olm/constants.js';
import { claimHeld, defaults, plan, servesPlan, type Observed } from './plan.js';

const IP = { apiVersion: V1ALPHA1, kind: 'InstallPlan' };

function installPlanOf(sub: KubeObject): Ref | undefined {
  const ref = (sub.status as { installPlanRef?: { name?: unknown } } | undefined)?.installPlanRef;
  // A status value goes into a URL: it must be a name.
  return isDnsSubdomain(ref?.name) ? { ...IP, namespace: sub.metadata.namespace!, name: ref.name } : undefined;
}

function targets(t: ResourceTrigger): TargetRef[] {
  if (t.verb === 'delete' || t.ref.apiVersion !== V1ALPHA1) return [];
  if (t.ref.kind === 'InstallPlan') return [t.ref];
  if (t.ref.kind === 'Subscription') {
    // Zero-cost filter: a Subscription without an installPlanRef owns nothing yet. Keyed by the
    // Subscription: its event asks whether ITS part of the plan holds (see observe). The event's
    // Subscription is the hint: the plan it names is read first, and if that plan already holds
    // this very claim, nothing else is read.
    if (!t.object) return [t.ref];
    return installPlanOf(t.object) ? [{ ...t.ref, hint: { object: t.object } }] : [];
  }
  return [];
}

/** Only the fields plan() reads, so a sweep over thousands of Subscriptions stays small in memory. */
function slim(sub: KubeObject): KubeObject {
  const m = sub.metadata;
  const kept = Object.fromEntries([ANN_GENERATED_BY, MEDIC.optOut].flatMap((k) => (m.annotations?.[k] !== undefined ? [[k, m.annotations[k]!]] : [])));
  return {
    apiVersion: sub.apiVersion,
    kind: sub.kind,
    metadata: { name: m.name, namespace: m.namespace!, uid: m.uid!, ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}), ...(Object.keys(kept).length ? { annotations: kept } : {}) },
    spec: { name: (sub.spec as { name?: string } | undefined)?.name },
    status: sub.status,
  };
}

/**
 * Lists Subscriptions and InstallPlans once (paginated) and runs the pure plan on them, yielding
 * only plans that would be repaired; observe() then re-reads those before any write.
 */
async function* sweep(read: Reader, scope: SweepScope): AsyncIterable<Ref> {
  const opts = scope.namespace ? { namespace: scope.namespace } : {};
  const subsByNs = new Map<string, KubeObject[]>();
  for await (const sub of read.list(V1ALPHA1, 'Subscription', opts)) {
    if (!installPlanOf(sub)) continue;
    const ns = sub.metadata.namespace!;
    // Appended in place: a namespace of many Subscriptions costs linear time, not quadratic.
    const list = subsByNs.get(ns);
    if (list) list.push(slim(sub));
    else subsByNs.set(ns, [slim(sub)]);
  }
  if (subsByNs.size === 0) return;
  // The epoch makes every label-only repair a candidate (requeue); observe() + plan() decide on the real clock.
  const ctx = { now: new Date(0), options: {}, policy: NO_POLICY };
  for await (const installPlan of read.list(V1ALPHA1, 'InstallPlan', opts)) {
    const subscriptions = subsByNs.get(installPlan.metadata.namespace!);
    if (subscriptions && ['act', 'requeue'].includes(plan({ installPlan, subscriptions }, ctx).kind)) {
      yield { ...IP, namespace: installPlan.metadata.namespace!, name: installPlan.metadata.name };
    }
  }
}

async function observe(ref: TargetRef, read: Reader, ctx: ObserveContext): Promise<Observed | undefined> {
  let ipRef: Ref = ref;
  let sub: KubeObject | undefined;
  let read1: KubeObject | undefined;
  if (ref.kind === 'Subscription') {
    // The event's claim: the plan it names already owns this Subscription (name, uid, label) —
    // nothing to repair for it, one read. Anything else (the plan lacks it, the event is older
    // than the plan, no plan) is decided on the live Subscription below, never on the event.
    const hinted = ref.hint?.object;
    const hintedPlan = hinted && hinted.metadata.name === ref.name && hinted.metadata.namespace === ref.namespace ? installPlanOf(hinted) : undefined;
    if (hinted && hintedPlan) {
      // In a burst of Subscription events (a catalog update), a recent metadata list of every plan
      // answers this instead of a GET each (burst-snapshots.ts); only a claim that holds ends here.
      const meta = await read.recentMetadata?.(hintedPlan, { apiVersion: V1ALPHA1, kind: 'Subscription', resourceVersion: hinted.metadata.resourceVersion });
      const recent = meta && { ...IP, metadata: meta };
      if (recent && onEventObject(() => claimHeld(hinted, recent))) return { installPlan: recent, subscriptions: [hinted], metadataOnly: true };
      read1 = await read.get(hintedPlan);
      if (read1 && holdsClaim(hinted, read1, ctx)) return { installPlan: read1, subscriptions: [hinted] };
    }
    sub = await read.get(ref);
    const r = sub && installPlanOf(sub);
    if (!r) return undefined;
    ipRef = r;
  }
  // The plan the hint named, read just now, is the plan the live Subscription names: not read twice.
  const installPlan = read1 && read1.metadata.name === ipRef.name ? read1 : await read.get(ipRef);
  if (!installPlan) return undefined;
  // A Subscription's event: when its own part holds (an owner of its plan, the plan labelled for it,
  // or no claim on it), there is nothing to repair for it and no need to read the whole namespace —
  // the same pure plan decides. The other Subscriptions of that plan are checked by their own
  // events, the InstallPlan's events and sweeps. (A catalog update touching n installed
  // Subscriptions of a namespace costs n GETs — the hint above — instead of n lists of n.)
  if (sub && plan({ installPlan, subscriptions: [sub] }, { ...ctx, now: ctx.clock() }).kind === 'noop') return { installPlan, subscriptions: [sub] };
  const subscriptions = await collect(read.list(V1ALPHA1, 'Subscription', { namespace: ipRef.namespace! }));
  return { installPlan, subscriptions };
}

/**
 * A check on the event's Subscription, whose fields are the event's (any shape): one that throws on
 * them has failed, never thrown past observe.
 */
function onEventObject(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

/** Whether the plan already holds the event's claim (never throws). */
function holdsClaim(hinted: KubeObject, installPlan: KubeObject, ctx: ObserveContext): boolean {
  return onEventObject(() => servesPlan(hinted, installPlan).ok && plan({ installPlan, subscriptions: [hinted] }, { ...ctx, now: ctx.clock() }).kind === 'noop');
}

export const ownerrefRepair: RemediationFunction<Observed> = {
  name: 'ownerref-repair',
  kinds: ['operators.coreos.com/v1alpha1/InstallPlan', 'operators.coreos.com/v1alpha1/Subscription'],
  summary: 'adds the missing non-blocking Subscription ownerReference (and component label) to InstallPlans',
  defaults,
  targets,
  sweep,
  observe,
  plan,
};
