/**
 * catalog-reschedule — a CatalogSource pod stuck on a NotReady node keeps the catalog down (olm-facts §3).
 *   listens   Pod add/update with label olm.catalogSource; sweeps. Not Node events: when a node stops
 *             being Ready the node lifecycle controller marks its pods NotReady and taint eviction
 *             deletes them (Pod events), and PodGC removes the pods of deleted nodes (README).
 *   reads     the pod(s) and their node; the catalog pods on a node; their CatalogSources
 *   writes    delete pod with gracePeriodSeconds 0 and uid+rv preconditions
 */
import { createHash } from 'node:crypto';
import type { ResourceTrigger } from '../../shared/events/types.js';
import type { ObserveContext, RemediationFunction, SweepScope } from '../../shared/core/types.js';
import type { KubeObject, Reader, Ref } from '../../shared/kube/types.js';
import { collect } from '../../shared/kube/collect.js';
import { isDnsSubdomain } from '../../shared/kube/validate.js';
import { RecentMap } from '../../shared/core/scheduling.js';
import { LABEL_CATALOG_SOURCE, V1ALPHA1 } from '../../shared/olm/constants.js';
import { condition } from '../../shared/olm/olm.js';
import { defaults, identityProblem, plan, type Observed, type PodFacts } from './plan.js';

const NODE = { apiVersion: 'v1', kind: 'Node' };

function targets(t: ResourceTrigger): Ref[] {
  if (t.verb === 'delete') return [];
  const o = t.object;
  if (t.ref.kind === 'Pod' && t.ref.apiVersion === 'v1') {
    if (!o) return [t.ref];
    const nodeName = (o.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!o.metadata.labels?.[LABEL_CATALOG_SOURCE] || !nodeName) return [];
    // A Ready pod that is not being deleted was on a working node when this was written: nothing to
    // check (decided from the event alone). When its node fails, the node lifecycle controller marks
    // it NotReady and taint eviction deletes it: each is another event, and that one is looked at.
    if (!o.metadata.deletionTimestamp && condition(o, 'Ready')?.status === 'True') return [];
    return [{ ...NODE, name: nodeName }];
  }
  return [];
}

async function* sweep(read: Reader, scope: SweepScope): AsyncIterable<Ref> {
  const nodes = new Set<string>();
  for await (const pod of read.list('v1', 'Pod', { labelSelector: LABEL_CATALOG_SOURCE, ...(scope.namespace ? { namespace: scope.namespace } : {}) })) {
    const n = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (n && !nodes.has(n)) {
      nodes.add(n);
      // A namespace's sweep looks at the node through one of that namespace's pods: observe then
      // keeps to the pod's namespace, so the sweep writes nothing outside it (red team 28b, S1).
      yield scope.namespace ? { apiVersion: 'v1', kind: 'Pod', namespace: pod.metadata.namespace!, name: pod.metadata.name } : { ...NODE, name: n };
    }
  }
}

/**
 * When each missing node was first seen missing (like PodGC's quarantine), and its catalog pods'
 * statuses as they were then (uid -> digest). In process and bounded: a restart only makes the wait
 * start again (the safe direction). A status written since (by their kubelet, back on a node that
 * re-registered and was lost again: red team 11 N1; whatever its clock: red team 12 Q1) starts the
 * wait again — a label or annotation change does not; and while it waits, it looks every
 * NODE_GONE_RECHECK_SECONDS, so a look that sees the node back ends it (red team 12 Q2: a return
 * that writes nothing). A sighting none of whose pods is left is over: pods found on the node later
 * start a new one (red team 28b Q1).
 */
const missingSince = new RecentMap<{ since: number; pods: Map<string, string> }>(10_000);

/** Keyed by node: one node loss affects all its catalog pods at once. */
async function observe(ref: Ref, read: Reader, ctx: ObserveContext): Promise<Observed | undefined> {
  let nodeName = ref.name;
  // Looked at through a pod (a namespace's sweep, a follow-up of a held pod): that namespace's pods only.
  const onlyNamespace = ref.kind === 'Pod' ? ref.namespace : undefined;
  if (ref.kind === 'Pod') {
    const pod = await read.get(ref);
    nodeName = (pod?.spec as { nodeName?: string } | undefined)?.nodeName ?? '';
  }
  // A value that goes into a URL and a field selector: it must be a node name.
  if (!isDnsSubdomain(nodeName)) return undefined;
  const node = await read.get({ ...NODE, name: nodeName });
  if (node) missingSince.delete(nodeName);
  if (node && condition(node, 'Ready')?.status === 'True') return { nodeName, node, pods: [] };
  const listed = await collect(read.list('v1', 'Pod', { labelSelector: LABEL_CATALOG_SOURCE, fieldSelector: `spec.nodeName=${nodeName}`, ...(onlyNamespace ? { namespace: onlyNamespace } : {}) }));
  const pods = listed.filter((p) => (p.spec as { nodeName?: string } | undefined)?.nodeName === nodeName && p.metadata.labels?.[LABEL_CATALOG_SOURCE] !== undefined && (!onlyNamespace || p.metadata.namespace === onlyNamespace));
  const catalogs = new Map<string, KubeObject | undefined>();
  const facts: PodFacts[] = [];
  for (const pod of pods) {
    const name = pod.metadata.labels?.[LABEL_CATALOG_SOURCE];
    // A label value is not a name: a pod whose label cannot name a CatalogSource is not a catalog
    // pod (nor a reason to fail the node for the others).
    if (!name || !isDnsSubdomain(name)) continue;
    const key = `${pod.metadata.namespace}/${name}`;
    if (!catalogs.has(key)) catalogs.set(key, await read.get({ apiVersion: V1ALPHA1, kind: 'CatalogSource', namespace: pod.metadata.namespace!, name }));
    const catalogSource = catalogs.get(key);
    facts.push({ pod, ...(catalogSource ? { catalogSource } : {}) });
  }
  let since: number | undefined;
  if (!node && facts.length) {
    // The server's clock as of the reads above (not ctx.now, taken before the process's first answer).
    const now = ctx.clock().getTime() / 1000;
    // Only a pod already there at the first sighting, whose status changed since, restarts the wait:
    // a pod created or removed meanwhile does not (pods bound to a gone node by name, churned by
    // anyone who can create pods, would otherwise hold the wait forever: red team 14, Q1).
    // And only the catalog pods olm-medic would act on (controlled by the live CatalogSource they name):
    // another pod labelled like one, bound to the node by name, is anyone's (red team 14, 16).
    const digests = new Map(facts.filter((f) => !identityProblem(f)).map((f) => [f.pod.metadata.uid ?? '', createHash('sha256').update(JSON.stringify(f.pod.status ?? null)).digest('base64url').slice(0, 16)]));
    const first = missingSince.get(nodeName);
    const changed = first !== undefined && [...digests].some(([uid, d]) => first.pods.has(uid) && first.pods.get(uid) !== d);
    // A sighting is over once none of its pods is left (olm-medic or PodGC removed them): pods found
    // later belong to a later loss and wait out the quarantine from it (red team 28b, Q1: a node lost,
    // healed, back unseen with a new catalog pod and lost again must not be judged from the first
    // loss). Not a time gap between looks: looks may come rarely (a sweep), and that must not hold
    // the wait forever.
    const over = first !== undefined && digests.size > 0 && ![...digests.keys()].some((uid) => first.pods.has(uid));
    // Newcomers are never added: their later status changes (PodGC marking them) must not restart it either (red team 16).
    if (first === undefined || changed || over) missingSince.set(nodeName, { since: now, pods: digests });
    since = missingSince.get(nodeName)!.since;
  }
  return { nodeName, ...(node ? { node } : {}), ...(since !== undefined ? { nodeMissingSince: since } : {}), pods: facts };
}

export const catalogReschedule: RemediationFunction<Observed> = {
  name: 'catalog-reschedule',
  kinds: ['v1/Pod'],
  summary: 'force-deletes CatalogSource pods stuck on nodes that are gone, fenced by how long the node has been gone',
  defaults,
  targets,
  sweep,
  observe,
  plan,
};
