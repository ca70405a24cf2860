/**
 * ownerref-repair — an InstallPlan misses the ownerReference to a Subscription that uses it (olm-facts §2).
 *   listens   InstallPlan add/update, Subscription add/update with status.installPlanRef, sweeps
 *   reads     the InstallPlan, the Subscriptions in its namespace
 *   writes    one merge patch of InstallPlan metadata (ownerReferences, component label) with a
 *             resourceVersion precondition
 */
import type { ResourceTrigger } from '../../shared/events/types.js';
import { NO_POLICY, type RemediationFunction, type SweepScope } from '../../shared/core/types.js';
import type { KubeObject, Reader, Ref } from '../../shared/kube/types.js';
import { collect } from '../../shared/kube/collect.js';
import { isDnsSubdomain } from '../../shared/kube/validate.js';
import { ANN_GENERATED_BY, MEDIC, V1ALPHA1 } from '../../shared/olm/constants.js';
import { defaults, plan, type Observed } from './plan.js';

const IP = { apiVersion: V1ALPHA1, kind: 'InstallPlan' };

function installPlanOf(sub: KubeObject): Ref | undefined {
  const ref = (sub.status as { installPlanRef?: { name?: unknown } } | undefined)?.installPlanRef;
  // A status value goes into a URL: it must be a name.
  return isDnsSubdomain(ref?.name) ? { ...IP, namespace: sub.metadata.namespace!, name: ref.name } : undefined;
}

function targets(t: ResourceTrigger): Ref[] {
  if (t.verb === 'delete' || t.ref.apiVersion !== V1ALPHA1) return [];
  if (t.ref.kind === 'InstallPlan') return [t.ref];
  if (t.ref.kind === 'Subscription') {
    if (!t.object) return [t.ref];
    const ip = installPlanOf(t.object);
    // Zero-cost filter: a Subscription without an installPlanRef owns nothing yet.
    return ip ? [ip] : [];
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
    subsByNs.set(ns, [...(subsByNs.get(ns) ?? []), slim(sub)]);
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

async function observe(ref: Ref, read: Reader): Promise<Observed | undefined> {
  let ipRef = ref;
  if (ref.kind === 'Subscription') {
    const sub = await read.get(ref);
    const r = sub && installPlanOf(sub);
    if (!r) return undefined;
    ipRef = r;
  }
  const installPlan = await read.get(ipRef);
  if (!installPlan) return undefined;
  const subscriptions = await collect(read.list(V1ALPHA1, 'Subscription', { namespace: ipRef.namespace! }));
  return { installPlan, subscriptions };
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
