/**
 * Safety invariants shared by the reliability suites (test/reliability): decoys that must never
 * be touched, an incremental reader of the control plane's audit log, and checks that no unsafe
 * write was ever sent — judged from what the apiserver actually received, not from what
 * olm-medic reports about itself.
 *
 * Unsafe, for the shipped identity (non-dry-run requests, whatever the answer):
 *  - deleting a Job that was running within its deadline (or with none),
 *  - deleting a Pod whose node was Ready,
 *  - deleting any CustomResourceDefinition, Namespace or Node,
 *  - removing the CSV finalizer while objects labelled as owned by that CSV still existed
 *    (ordering in the audit log: every owned object's first successful delete must complete
 *    before the finalizer-removal patch is received),
 *  - any write at all to a decoy (same uid and resourceVersion afterwards).
 */
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import type { CloudEvent } from 'cloudevents';
import type { Kube, KubeObject, Ref } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import * as olm from '../fixtures/olm-objects.js';
import { apiServerEvent } from './events.js';

// ---------------------------------------------------------------------------------------------
// Audit log
// ---------------------------------------------------------------------------------------------

/** One audit.k8s.io/v1 Event (Metadata level), the fields the checks use. */
export interface AuditRecord {
  auditID: string;
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string; subresource?: string };
  responseStatus?: { code?: number };
  /** metav1.MicroTime, fixed width (…T15:04:05.000000Z): compares as a string. */
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

/** Reads the audit log incrementally (byte offset), so repeated checks stay cheap on a big log. */
export class AuditLog {
  private offset = 0;
  private rest = '';
  private readonly records: AuditRecord[] = [];
  constructor(readonly path: string) {}

  /** Every ResponseComplete record so far (new lines are parsed on each call). */
  all(): AuditRecord[] {
    if (!existsSync(this.path)) return this.records;
    const fd = openSync(this.path, 'r');
    try {
      const size = fstatSync(fd).size;
      // A shorter file than what was read: the log was rotated (a new file); read it from the start.
      if (size < this.offset) {
        this.offset = 0;
        this.rest = '';
      }
      const chunk = Buffer.alloc(1 << 20);
      while (this.offset < size) {
        const n = readSync(fd, chunk, 0, Math.min(chunk.length, size - this.offset), this.offset);
        if (n <= 0) break;
        this.offset += n;
        const text = this.rest + chunk.subarray(0, n).toString('utf8');
        const lines = text.split('\n');
        this.rest = lines.pop() ?? '';
        for (const l of lines) {
          if (!l) continue;
          const r = JSON.parse(l) as AuditRecord;
          if (r.stage === 'ResponseComplete') this.records.push(r);
        }
      }
    } finally {
      closeSync(fd);
    }
    return this.records;
  }

  /** Records received at or after `since` (a MicroTime string or ISO time). */
  since(since: string): AuditRecord[] {
    return this.all().filter((r) => r.requestReceivedTimestamp >= since);
  }

  /** Waits until `user` has sent no write for `quietMs` (requeue timers may still be acting). */
  async settle(user: string, quietMs = 1_500, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let count = -1;
    let stableSince = Date.now();
    while (Date.now() < deadline) {
      const n = this.all().filter((r) => r.user?.username === user && WRITE_VERBS.has(r.verb)).length;
      if (n !== count) {
        count = n;
        stableSince = Date.now();
      } else if (Date.now() - stableSince >= quietMs) return;
      await sleep(100);
    }
  }
}

/** An audit timestamp for "now", comparable with AuditRecord timestamps (minus a little slack). */
export function auditNow(slackMs = 0): string {
  return new Date(Date.now() - slackMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
export const isDryRun = (r: AuditRecord): boolean => /[?&]dryRun=/.test(r.requestURI);
export const code = (r: AuditRecord): number => r.responseStatus?.code ?? 0;
export const ok = (r: AuditRecord): boolean => code(r) >= 200 && code(r) < 300;
export const keyOf = (resource: string, namespace: string | undefined, name: string): string => `${resource}/${namespace ?? ''}/${name}`;
export const recordKey = (r: AuditRecord): string => keyOf(r.objectRef?.resource ?? '?', r.objectRef?.namespace, r.objectRef?.name ?? '');

/** Non-dry-run writes (delete/patch/update) by `user`, optionally only those `where` accepts. */
export function writesBy(records: AuditRecord[], user: string, where: (r: AuditRecord) => boolean = () => true): AuditRecord[] {
  return records.filter((r) => r.user?.username === user && ['delete', 'patch', 'update', 'deletecollection'].includes(r.verb) && !r.objectRef?.subresource && !isDryRun(r) && where(r));
}

// ---------------------------------------------------------------------------------------------
// Baseline: what the cluster looked like before olm-medic got to it
// ---------------------------------------------------------------------------------------------

const OWNED_KINDS: [string, string, string][] = [
  ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles'],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings'],
  ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations'],
  ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations'],
  ['apiregistration.k8s.io/v1', 'APIService', 'apiservices'],
];

export interface SafetyBaseline {
  /** Jobs (keys) that were running within their deadline, or running with none, or suspended. */
  runningJobs: Set<string>;
  /** Pods (keys) on a node whose Ready condition was True. */
  readyNodePods: Set<string>;
  /** CSV key (namespace/name) -> keys of the cluster-scoped objects labelled as its own. */
  csvOwned: Map<string, string[]>;
}

export function emptyBaseline(): SafetyBaseline {
  return { runningJobs: new Set(), readyNodePods: new Set(), csvOwned: new Map() };
}

type Obj = KubeObject & { spec?: Record<string, any>; status?: Record<string, any> };

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Margin olm-medic is configured with (OLM_MEDIC_JOB_CONFLICT_MARGIN_SECONDS default). */
const JOB_MARGIN_SECONDS = 60;

function runningWithinDeadline(job: Obj, nowSec: number): boolean {
  if (job.spec?.suspend === true) return true; // suspended: never to be deleted, however old
  const conds = (job.status?.conditions ?? []) as { type: string; status: string }[];
  if (conds.some((c) => (c.type === 'Failed' || c.type === 'Complete') && c.status === 'True')) return false;
  const start = Date.parse(job.status?.startTime ?? job.metadata.creationTimestamp ?? '') / 1000;
  const deadline = job.spec?.activeDeadlineSeconds as number | undefined;
  if (!deadline || !Number.isFinite(start)) return true;
  return nowSec < start + deadline + JOB_MARGIN_SECONDS;
}

/** Snapshots Jobs, Pods and CSVs (with their labelled cluster-scoped objects) in `namespaces`. */
export async function takeBaseline(admin: Kube, namespaces: string[], into: SafetyBaseline = emptyBaseline()): Promise<SafetyBaseline> {
  const nowSec = Date.now() / 1000;
  const nodeReady = new Map<string, boolean>();
  await Promise.all(
    namespaces.map(async (ns) => {
      for (const job of await collect(admin.list<Obj>('batch/v1', 'Job', { namespace: ns }))) {
        if (runningWithinDeadline(job, nowSec)) into.runningJobs.add(keyOf('jobs', ns, job.metadata.name));
      }
      for (const pod of await collect(admin.list<Obj>('v1', 'Pod', { namespace: ns }))) {
        const nodeName = pod.spec?.nodeName as string | undefined;
        if (!nodeName) continue;
        if (!nodeReady.has(nodeName)) {
          const node = await admin.get<Obj>({ apiVersion: 'v1', kind: 'Node', name: nodeName });
          const ready = ((node?.status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === 'Ready' && c.status === 'True');
          nodeReady.set(nodeName, ready);
        }
        if (nodeReady.get(nodeName)) into.readyNodePods.add(keyOf('pods', ns, pod.metadata.name));
      }
      const csvs = await collect(admin.list<Obj>(olm.OPERATORS_V1ALPHA1, 'ClusterServiceVersion', { namespace: ns }));
      const owned = new Map<string, string[]>(csvs.map((c) => [`${ns}/${c.metadata.name}`, []]));
      for (const [apiVersion, kind, resource] of OWNED_KINDS) {
        for (const o of await collect(admin.list(apiVersion, kind, { labelSelector: `olm.owner.kind=ClusterServiceVersion,olm.owner.namespace=${ns}` }))) {
          const csv = `${ns}/${o.metadata.labels?.['olm.owner']}`;
          owned.set(csv, [...(owned.get(csv) ?? []), keyOf(resource, undefined, o.metadata.name)]);
        }
      }
      for (const [k, v] of owned) into.csvOwned.set(k, v);
    }),
  );
  return into;
}

// ---------------------------------------------------------------------------------------------
// The unsafe-action check
// ---------------------------------------------------------------------------------------------

const NEVER_DELETED = new Set(['customresourcedefinitions', 'namespaces', 'nodes']);

/**
 * Violations of the safety invariants in `records` (the audit log, all users: deletions by others
 * matter for the finalizer ordering) by `user`, judged against `baseline`. Empty when safe.
 */
export function unsafeActions(records: AuditRecord[], user: string, baseline: SafetyBaseline): string[] {
  const out: string[] = [];
  const mine = records.filter((r) => r.user?.username === user && !isDryRun(r));
  for (const r of mine) {
    if (r.verb !== 'delete' && r.verb !== 'deletecollection') continue;
    const res = r.objectRef?.resource ?? '';
    const k = recordKey(r);
    const what = `${r.verb} ${k} (HTTP ${code(r)}) at ${r.requestReceivedTimestamp}`;
    if (NEVER_DELETED.has(res)) out.push(`deleted a ${res.replace(/s$/, '')}: ${what}`);
    if (r.verb === 'deletecollection') out.push(`deletecollection: ${what}`);
    if (res === 'jobs' && baseline.runningJobs.has(k)) out.push(`deleted a Job running within its deadline: ${what}`);
    if (res === 'pods' && baseline.readyNodePods.has(k)) out.push(`deleted a Pod whose node was Ready: ${what}`);
  }

  // Finalizer removal only after every labelled owned object is gone.
  const firstOkDelete = new Map<string, AuditRecord>();
  for (const r of records) {
    if (r.verb !== 'delete' || !ok(r) || isDryRun(r)) continue;
    const k = recordKey(r);
    const prev = firstOkDelete.get(k);
    if (!prev || r.stageTimestamp < prev.stageTimestamp) firstOkDelete.set(k, r);
  }
  for (const [csv, owned] of baseline.csvOwned) {
    const [ns, name] = csv.split('/') as [string, string];
    const deleted = firstOkDelete.get(keyOf('clusterserviceversions', ns, name));
    if (!deleted) continue; // never deleted: every patch is the finalizer being added
    const removals = mine.filter(
      (r) => r.verb === 'patch' && ok(r) && !r.objectRef?.subresource && recordKey(r) === keyOf('clusterserviceversions', ns, name) && r.requestReceivedTimestamp > deleted.stageTimestamp,
    );
    for (const rm of removals) {
      for (const o of owned) {
        const d = firstOkDelete.get(o);
        if (!d || d.stageTimestamp > rm.requestReceivedTimestamp) {
          out.push(`finalizer ${MEDIC.finalizer} removed from CSV ${csv} at ${rm.requestReceivedTimestamp} while ${o} still existed (deleted ${d ? `at ${d.stageTimestamp}` : 'never'})`);
        }
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Decoys
// ---------------------------------------------------------------------------------------------

export interface Decoys {
  id: string;
  namespaces: string[];
  /** Objects that must end with the same uid and resourceVersion. */
  objects: KubeObject[];
  /** What an ApiServerSource would deliver about the decoys (watched kinds only). */
  events(): CloudEvent<unknown>[];
  /** Events no ApiServerSource sends (crafted names): each must be rejected with a 400, before any request. */
  crafted(): CloudEvent<unknown>[];
}

const minutesAgo = (m: number): Date => new Date(Date.now() - m * 60_000);
const refOf = (o: KubeObject): Ref => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Look-alikes of the seed situations, each missing exactly what makes acting safe:
 *  - an unpack Job invisible to OLM (no olm.managed label) but running within its deadline, with a
 *    Subscription stuck on unpacking that sources from it;
 *  - a catalog pod stuck Terminating on a node that is Ready;
 *  - a CRD labelled as owned by a CSV that does not exist (olm-medic never deletes CRDs);
 *  - an unrelated ClusterRole, and a ClusterRole labelled as owned by a CSV that does exist.
 * (The live CSV itself may legitimately get olm-medic's finalizer, so it is not a decoy.)
 * `id`: lowercase letters and digits.
 */
export async function createDecoys(admin: Kube, id: string): Promise<Decoys> {
  const ns = `decoy-${id}`;
  const create = async (o: object): Promise<KubeObject> => admin.create(o as KubeObject, { dryRun: false });
  const status = async (o: KubeObject, st: object): Promise<KubeObject> => {
    const r = await admin.mergePatch(refOf(o), { status: st }, { dryRun: false, subresource: 'status' });
    if (r === 'gone') throw new Error('decoy vanished');
    return r;
  };
  await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

  // A running, OLM-invisible unpack Job within its deadline.
  const image = `quay.io/example/decoy-bundle:v${id}`;
  const cs = await create(olm.catalogSource({ namespace: ns, name: 'decoy-catalog', image: 'quay.io/example/decoy-index:latest' }));
  const cm = await create(olm.unpackConfigMap({ namespace: ns, image, catalogSourceName: 'decoy-catalog', catalogSourceUid: cs.metadata.uid! }));
  let job = await create(olm.unpackJob({ namespace: ns, image, configMapUid: cm.metadata.uid!, variant: 'no-managed-label' }));
  job = await status(job, olm.jobStatusActive({ startedAt: new Date() }));
  let sub = await create(olm.subscription({ namespace: ns, name: 'decoy-sub', package: 'decoy', source: 'decoy-catalog', sourceNamespace: ns }));
  sub = await status(sub, olm.subscriptionStatus({ conditions: [olm.bundleUnpackingCondition(new Date())] }));

  // A catalog pod stuck Terminating on a Ready node.
  const node = await create(olm.node({ name: `decoy-ready-${id}`, ready: true, since: minutesAgo(30) }));
  const cs2 = await create(olm.catalogSource({ namespace: ns, name: 'decoy-index', image: 'quay.io/example/decoy-index:v2' }));
  const pod0 = await create(olm.catalogPod({ namespace: ns, catalogSourceName: 'decoy-index', catalogSourceUid: cs2.metadata.uid!, nodeName: node.metadata.name, image: 'quay.io/example/decoy-index:v2' } as never));
  await admin.delete(refOf(pod0), { uid: pod0.metadata.uid!, gracePeriodSeconds: 3600, dryRun: false });
  const pod = (await admin.get(refOf(pod0)))!;

  // A CRD labelled as owned by a CSV that does not exist.
  const group = `decoy${id}.example.com`;
  let crd = await create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}`, labels: olm.csvOwnerLabels(`gone-${id}.v1.0.0`, ns) },
    spec: {
      group,
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  });

  // ClusterRoles: unrelated, and owned by a live CSV.
  const csv = await create(olm.csv({ namespace: ns, name: `decoy-op-${id}.v1.0.0`, phase: 'Succeeded' }));
  const unrelated = await create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `decoy-${id}-unrelated` }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
  const liveOwned = await create(olm.csvClusterRole({ csvName: csv.metadata.name, csvNamespace: ns, name: `decoy-${id}-live-csv-cr` } as never));

  // The apiserver writes the CRD's status (Established) right after creation: snapshot after that.
  const deadline = Date.now() + 10_000;
  for (;;) {
    crd = (await admin.get(refOf(crd)))!;
    const conds = ((crd.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
    if (conds.some((c) => c.type === 'Established' && c.status === 'True') && conds.some((c) => c.type === 'NamesAccepted')) break;
    if (Date.now() > deadline) throw new Error(`decoy CRD ${crd.metadata.name} not established`);
    await sleep(50);
  }
  await sleep(200);
  crd = (await admin.get(refOf(crd)))!;

  const adv = await adversarialDecoys(admin, id, ns, create, status);
  const objects = [cs, cm, job, sub, node, cs2, pod, crd, unrelated, liveOwned, ...adv.objects];
  return {
    id,
    namespaces: [ns, ...adv.namespaces],
    objects,
    events: () => [
      apiServerEvent('add', job), apiServerEvent('update', job), apiServerEvent('add', sub), apiServerEvent('add', node), apiServerEvent('update', pod), apiServerEvent('add', csv),
      ...adv.events(),
    ],
    crafted: () => craftedEvents(csv),
  };
}

/**
 * Adversarial look-alikes (issue 8): objects a user (or an older OLM) can create that resemble a
 * seed situation but whose live state justifies no write. Each must end untouched.
 *  - a hash-named Failed Job owned by a ConfigMap no CatalogSource owns (not OLM's);
 *  - a suspended unpack Job (queued, no startTime);
 *  - an OLM v0.19-v0.25 catalog namespace: labelled ConfigMap, unlabelled Complete Job, unlabelled
 *    registry pod (a healthy unpack OLM finds by name);
 *  - a pod labelled olm.catalogSource without a CatalogSource owner, on a node NotReady for a day;
 *  - a catalog pod that tolerates unreachable forever (no tolerationSeconds), node NotReady for a day;
 *  - a catalog pod on a node NotReady for 100 s (inside the fence: a skewed host clock must not matter);
 *  - an operator whose `<pkg>.<ns>` exceeds 63 chars (truncated Operator name), still subscribed,
 *    with an Operator object annotated for uninstall.
 */
async function adversarialDecoys(
  admin: Kube,
  id: string,
  ns: string,
  create: (o: object) => Promise<KubeObject>,
  status: (o: KubeObject, st: object) => Promise<KubeObject>,
): Promise<{ namespaces: string[]; objects: KubeObject[]; events(): CloudEvent<unknown>[] }> {
  const objects: KubeObject[] = [];
  const events: CloudEvent<unknown>[] = [];
  const keep = (o: KubeObject, ...verbs: ('add' | 'update')[]): KubeObject => {
    objects.push(o);
    for (const v of verbs.length ? verbs : (['add', 'update'] as const)) events.push(apiServerEvent(v, o));
    return o;
  };

  // Hash-named Failed Job whose ConfigMap is the user's (no CatalogSource owner).
  const userImage = `quay.io/example/user-bundle:v${id}`;
  const userCm = await create({ ...olm.unpackConfigMap({ namespace: ns, image: userImage, catalogSourceName: 'x', catalogSourceUid: 'x' }), metadata: { name: olm.unpackHash(userImage), namespace: ns } });
  objects.push(userCm);
  let userJob = await create(olm.unpackJob({ namespace: ns, image: userImage, configMapUid: userCm.metadata.uid! }));
  userJob = await status(userJob, olm.jobStatusFailed({ reason: 'BackoffLimitExceeded', at: minutesAgo(120), startedAt: minutesAgo(130) }));
  keep(userJob);

  // A suspended unpack Job, OLM's shape otherwise (deadline 60 s, created now, never started).
  const cs = await create(olm.catalogSource({ namespace: ns, name: 'adv-catalog', image: 'quay.io/example/adv-index:v1' }));
  objects.push(cs);
  const susImage = `quay.io/example/suspended-bundle:v${id}`;
  const susCm = await create(olm.unpackConfigMap({ namespace: ns, image: susImage, catalogSourceName: 'adv-catalog', catalogSourceUid: cs.metadata.uid! }));
  objects.push(susCm);
  const susBuilt = olm.unpackJob({ namespace: ns, image: susImage, configMapUid: susCm.metadata.uid!, activeDeadlineSeconds: 60 });
  susBuilt.spec.suspend = true;
  keep(await create(susBuilt));

  // OLM v0.19-v0.25: labelled ConfigMap, unlabelled Complete Job, registry pod without olm.managed.
  const oldNs = `decoy-${id}-v025`;
  await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: oldNs } });
  const oldCs = await create(olm.catalogSource({ namespace: oldNs, name: 'old-catalog', image: 'quay.io/example/old-index:v1' }));
  objects.push(oldCs);
  const oldNode = await create(olm.node({ name: `decoy-old-${id}`, ready: true, since: minutesAgo(60) }));
  objects.push(oldNode);
  objects.push(await create(olm.catalogPod({ namespace: oldNs, catalogSourceName: 'old-catalog', catalogSourceUid: oldCs.metadata.uid!, nodeName: oldNode.metadata.name, image: 'quay.io/example/old-index:v1', managedLabel: false } as never)));
  const oldImage = `quay.io/example/old-bundle:v${id}`;
  const oldCm = await create(olm.unpackConfigMap({ namespace: oldNs, image: oldImage, catalogSourceName: 'old-catalog', catalogSourceUid: oldCs.metadata.uid!, extractedPackage: 'old' }));
  objects.push(oldCm);
  let oldJob = await create(olm.unpackJob({ namespace: oldNs, image: oldImage, configMapUid: oldCm.metadata.uid!, variant: 'no-ref-label' }));
  oldJob = await status(oldJob, olm.jobStatusComplete({ at: minutesAgo(600), startedAt: minutesAgo(601) }));
  keep(oldJob);

  // Nodes NotReady for a day, and for 100 s.
  const deadNode = await create(olm.node({ name: `decoy-dead-${id}`, ready: 'Unknown', since: minutesAgo(24 * 60), taints: [olm.taintUnreachable(minutesAgo(24 * 60))] }));
  objects.push(await status(deadNode, { conditions: (olm.node({ name: 'x', ready: 'Unknown', since: minutesAgo(24 * 60) }).status as { conditions: unknown[] }).conditions }));
  const freshNode = await create(olm.node({ name: `decoy-fresh-${id}`, ready: 'Unknown', since: new Date(Date.now() - 100_000), taints: [olm.taintUnreachable(new Date(Date.now() - 100_000))] }));
  objects.push(await status(freshNode, { conditions: (olm.node({ name: 'x', ready: 'Unknown', since: new Date(Date.now() - 100_000) }).status as { conditions: unknown[] }).conditions }));
  // ... a pod labelled olm.catalogSource without any CatalogSource owner on the dead node;
  keep(await create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'lookalike-registry', namespace: ns, labels: { 'olm.catalogSource': 'adv-catalog' } }, spec: { nodeName: deadNode.metadata.name, containers: [{ name: 'c', image: 'x' }] } }));
  // ... a real catalog pod that tolerates unreachable forever, on the dead node;
  const forever = olm.catalogPod({ namespace: ns, catalogSourceName: 'adv-catalog', catalogSourceUid: cs.metadata.uid!, nodeName: deadNode.metadata.name, image: 'quay.io/example/adv-index:v1', name: 'adv-catalog-forever' } as never);
  forever.spec.tolerations = [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }, { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }];
  keep(await create(forever));
  // ... and one on the node NotReady for 100 s (fence 300 + 30 s).
  keep(await create(olm.catalogPod({ namespace: ns, catalogSourceName: 'adv-catalog', catalogSourceUid: cs.metadata.uid!, nodeName: freshNode.metadata.name, image: 'quay.io/example/adv-index:v1', name: 'adv-catalog-fresh' } as never)));

  // A subscribed operator whose <pkg>.<ns> exceeds 63 chars, its Operator annotated for uninstall.
  const longNs = `decoy-${id}-openshift-cluster-observability-operator`.slice(0, 63).replace(/-+$/, '');
  await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: longNs } });
  const pkg = 'cluster-observability-operator';
  const key = olm.componentLabelKey(pkg, longNs);
  const labels = { [key]: '' };
  const builtCsv = olm.csv({ namespace: longNs, name: `${pkg}.v1.0.0`, phase: 'Failed', at: minutesAgo(180), labels, finalizers: [olm.CSV_CLEANUP_FINALIZER] });
  const longCsv = await status(await create(builtCsv), builtCsv.status);
  const longSub = await create(olm.subscription({ namespace: longNs, name: pkg, package: pkg, source: 'adv-catalog', sourceNamespace: ns, labels } as never));
  const longSa = await create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'controller', namespace: longNs, labels } });
  objects.push(longCsv, longSub, longSa);
  const opBuilt = olm.operatorObject({ pkg, namespace: longNs, refs: [longCsv, longSub, longSa].map((o) => ({ kind: o.kind, apiVersion: o.apiVersion, namespace: longNs, name: o.metadata.name })) });
  opBuilt.metadata.annotations = { 'olm-medic.io/uninstall': 'true' };
  const op = await status(await create(opBuilt), opBuilt.status);
  keep(op, 'update');

  return { namespaces: [oldNs, longNs], objects, events: () => events };
}

/**
 * Events no ApiServerSource sends but anyone who can reach the Broker can: names and namespaces
 * carrying selector syntax, whitespace, path segments, unicode, or over 253 characters, about a
 * live CSV. Each must be rejected (400) before any request.
 */
export function craftedEvents(liveCsv: KubeObject): CloudEvent<unknown>[] {
  const n = liveCsv.metadata.name;
  const names = [`${n},olm.owner.kind=ClusterServiceVersion`, `${n} `, `../${n}`, `${n}\u00f1`, 'x'.repeat(300), `${n}%2F..`];
  const forged = names.map((name) => ({ ...liveCsv, metadata: { ...liveCsv.metadata, name, deletionTimestamp: new Date().toISOString() } }));
  const badNs = { ...liveCsv, metadata: { ...liveCsv.metadata, namespace: 'a,b=c' } };
  return [...forged.map((o) => apiServerEvent('delete', o)), apiServerEvent('update', badNs)];
}

/** Differences between the decoys as created and as they are now. Empty when untouched. */
export async function decoyViolations(admin: Kube, decoys: Decoys): Promise<string[]> {
  const out: string[] = [];
  for (const o of decoys.objects) {
    const live = await admin.get(refOf(o));
    const name = `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
    if (!live) out.push(`decoy ${name} was deleted`);
    else if (live.metadata.uid !== o.metadata.uid) out.push(`decoy ${name} was recreated`);
    else if (live.metadata.resourceVersion !== o.metadata.resourceVersion) out.push(`decoy ${name} was modified (rv ${o.metadata.resourceVersion} -> ${live.metadata.resourceVersion})`);
  }
  return out;
}
