/** catalog-reschedule's pure plan: a decision table, and properties over arbitrary observations. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { defaults, identityProblem, plan, type Observed, type PodFacts } from '../../functions/catalog-reschedule/plan.js';
import { catalogReschedule } from '../../functions/catalog-reschedule/index.js';
import { NO_POLICY, type Action, type Plan, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import {
  catalogPod,
  catalogSource,
  node,
  podConditionDisruptionTarget,
  rfc3339,
  taintNotReady,
  taintOutOfService,
  taintUnreachable,
  type Obj,
} from '../fixtures/olm-objects.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const ago = (s: number) => new Date(NOW.getTime() - s * 1000);
const NODE = 'worker-1';
const NS = 'olm';
const IMAGE = 'quay.io/operatorhubio/catalog:latest';
const ctx = (options: Record<string, number> = {}): PlanContext => ({ now: NOW, options: { ...defaults, ...options }, policy: NO_POLICY });

let seq = 0;
function live(o: Obj, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  seq++;
  const metadata = { name: o.metadata.name ?? `${o.metadata.generateName ?? 'x-'}${seq}`, uid: `uid-${seq}`, resourceVersion: String(1000 + seq), creationTimestamp: rfc3339(ago(3600)), ...o.metadata, ...extra };
  delete metadata.generateName;
  return { ...o, metadata } as KubeObject;
}

const catsrc = (name = 'operatorhubio-catalog', annotations?: Record<string, string>) => live(catalogSource({ namespace: NS, name, image: IMAGE, ...(annotations ? { annotations } : {}) }));

interface PodOpts {
  cs?: KubeObject;
  nodeName?: string;
  terminating?: boolean;
  disruptionAgo?: number;
  labels?: (l: Record<string, string>) => Record<string, string>;
  ownerUid?: string;
  controller?: boolean;
  tolerationSeconds?: number;
}
function pod(o: PodOpts = {}): PodFacts & { pod: KubeObject } {
  const cs = o.cs ?? catsrc();
  const b = catalogPod({ namespace: NS, catalogSourceName: cs.metadata.name, catalogSourceUid: o.ownerUid ?? cs.metadata.uid!, nodeName: o.nodeName ?? NODE, image: IMAGE, ...(cs.metadata.annotations ? { catalogSourceAnnotations: cs.metadata.annotations } : {}) });
  if (o.labels) b.metadata.labels = o.labels(b.metadata.labels);
  if (o.controller === false) b.metadata.ownerReferences[0].controller = false;
  if (o.tolerationSeconds !== undefined) for (const t of b.spec.tolerations) t.tolerationSeconds = o.tolerationSeconds;
  if (o.disruptionAgo !== undefined) b.status = { conditions: [podConditionDisruptionTarget('DeletionByTaintManager', ago(o.disruptionAgo))] };
  // Taint eviction marks DisruptionTarget and deletes the pod at once: the delete (deletionTimestamp
  // minus its 30 s grace) is as old as the condition.
  const deleteAsked = o.disruptionAgo ?? 40;
  const p = live(b, o.terminating === false ? {} : { deletionTimestamp: rfc3339(ago(deleteAsked - 30)), deletionGracePeriodSeconds: 30 });
  return { pod: p, catalogSource: cs };
}

const unknownNode = (secondsAgo: number, taints?: Obj[]) => live(node({ name: NODE, ready: 'Unknown', since: ago(secondsAgo), taints: taints ?? [taintUnreachable(ago(secondsAgo))] }));
const notReadyNode = (secondsAgo: number) => live(node({ name: NODE, ready: false, since: ago(secondsAgo), taints: [taintNotReady(ago(secondsAgo))] }));
const readyNode = () => live(node({ name: NODE, ready: true, since: ago(86_400) }));
const obs = (n: KubeObject | undefined, ...pods: PodFacts[]): Observed => ({ nodeName: NODE, ...(n ? { node: n } : {}), pods });

type Expect = { kind: Plan['kind']; deletes?: number; reason?: RegExp; after?: number; note?: RegExp };

function check(p: Plan, e: Expect): void {
  expect(p.kind).toBe(e.kind);
  if (p.kind === 'act') {
    expect(p.actions).toHaveLength(e.deletes ?? 1);
    for (const a of p.actions) {
      expect(a).toMatchObject({ verb: 'delete', gracePeriodSeconds: 0, reason: 'CatalogPodForceDeleted', target: { kind: 'Pod' }, regarding: { kind: 'CatalogSource' } });
      expect(a.target.uid).toMatch(/^uid-/);
      if (e.note) expect(a.note).toMatch(e.note);
    }
  }
  if (p.kind === 'requeue') expect(p.afterSeconds).toBe(e.after);
  if (p.kind === 'defer') {
    expect(p.reason).toBe('DeferredToOlm');
    expect(p.requeueAfterSeconds).toBe(e.after);
  }
  if (p.kind === 'noop' && e.reason) expect(p.reason).toMatch(e.reason);
}

describe('catalog-reschedule plan: decision table', () => {
  const cs = catsrc();
  const other = catsrc('certified-operators');
  const optedOut = catsrc('my-catalog', { 'olm-medic.io/ignore': 'true' });
  it.each<[string, Observed, Expect, Record<string, number>?]>([
    // the case OLM misses: Terminating without DisruptionTarget, node gone past 300 s toleration + 30 s
    ['stuck pod, node Unknown for 10 min', obs(unknownNode(600), pod({ cs })), { kind: 'act', note: /stuck Terminating.*unreachable toleration \(300s\) plus 30s/ }],
    // Ready=False uses the not-ready toleration
    ['stuck pod, node False for 10 min', obs(notReadyNode(600), pod({ cs })), { kind: 'act', note: /not-ready toleration/ }],
    // the fence is exactly toleration + margin: at 330 s it acts
    ['node gone exactly 330 s', obs(unknownNode(330), pod({ cs })), { kind: 'act' }],
    // one second inside the fence: requeue for that second
    ['node gone 329 s', obs(unknownNode(329), pod({ cs })), { kind: 'requeue', after: 1 }],
    // inside the fence: requeue for the rest of it
    ['node gone 60 s', obs(unknownNode(60), pod({ cs })), { kind: 'requeue', after: 270 }],
    // a longer pod toleration stretches the fence
    ['toleration 900 s, node gone 600 s', obs(unknownNode(600), pod({ cs, tolerationSeconds: 900 })), { kind: 'requeue', after: 330 }],
    // the margin is an option
    ['margin 0, node gone 300 s', obs(unknownNode(300), pod({ cs })), { kind: 'act' }, { fenceMarginSeconds: 0 }],
    // a Ready node: never
    ['node Ready', obs(readyNode(), pod({ cs })), { kind: 'noop', reason: /is Ready/ }],
    // the Node object is gone: the pod can never terminate
    // the Node object is gone and was first seen missing 100 s ago (past the 90 s quarantine)
    ['node deleted', { ...obs(undefined, pod({ cs })), nodeMissingSince: NOW.getTime() / 1000 - 100 }, { kind: 'act', note: /no longer exists/ }],
    // just seen missing: it may re-register (looked at every 15 s meanwhile: a look that sees it back ends the wait)
    ['node deleted, just seen missing', { ...obs(undefined, pod({ cs })), nodeMissingSince: NOW.getTime() / 1000 - 5 }, { kind: 'requeue', after: 15 }],
    // missing for 60 s: PodGC (40 s quarantine, checked every 20 s) may still be about to delete the pod itself
    ['node deleted 60 s ago: PodGC goes first', { ...obs(undefined, pod({ cs })), nodeMissingSince: NOW.getTime() / 1000 - 60 }, { kind: 'requeue', after: 15 }],
    ['node deleted 80 s ago: the rest of the quarantine', { ...obs(undefined, pod({ cs })), nodeMissingSince: NOW.getTime() / 1000 - 80 }, { kind: 'requeue', after: 10 }],
    // red team 12 Q3: not Ready for an hour by a Ready transition (a kubelet's clock, maybe skewed) but no
    // NoExecute taint yet (the control plane taints rate-limited, or not at all in a zone's full
    // disruption): Kubernetes has not started the toleration clock; neither does olm-medic
    ['not Ready 1 h, no NoExecute taint', obs(live(node({ name: NODE, ready: false, since: ago(3600) })), pod({ cs })), { kind: 'requeue', after: 30 }],
    ['not Ready 1 h, only a NoSchedule taint', obs(live(node({ name: NODE, ready: false, since: ago(3600), taints: [taintNotReady(ago(3600), 'NoSchedule')] })), pod({ cs })), { kind: 'requeue', after: 30 }],
    // out-of-service: the admin declared the node dead, no fence
    ['out-of-service inside the fence', obs(unknownNode(10, [taintUnreachable(ago(10)), taintOutOfService()]), pod({ cs })), { kind: 'act', note: /out-of-service/ }],
    // DisruptionTarget older than olmGraceSeconds: OLM should have acted, it did not
    ['DisruptionTarget 90 s old', obs(unknownNode(90), pod({ cs, disruptionAgo: 90 })), { kind: 'act', note: /DisruptionTarget=True \(DeletionByTaintManager\)/ }],
    // DisruptionTarget younger than olmGraceSeconds: OLM v0.29+ handles it
    ['DisruptionTarget 10 s old', obs(unknownNode(600), pod({ cs, disruptionAgo: 10 })), { kind: 'defer', after: 50 }],
    // a pod that is not Terminating on a long-dead node is also replaced
    ['not Terminating, node gone 10 min', obs(unknownNode(600), pod({ cs, terminating: false })), { kind: 'act', note: /not Terminating/ }],
    // no catalog label
    ['no olm.catalogSource label', obs(unknownNode(600), pod({ cs, labels: ({ ['olm.catalogSource']: _x, ...l }) => l })), { kind: 'noop', reason: /no olm.catalogSource label/ }],
    // update pod: olm.catalogSource="" plus the update label
    ['update pod', obs(unknownNode(600), pod({ cs, labels: (l) => ({ ...l, 'olm.catalogSource': '', 'catalogsource.operators.coreos.com/update': cs.metadata.name }) })), { kind: 'noop', reason: /update pod/ }],
    // controller ownerRef to an older CatalogSource uid (recreated)
    ['recreated CatalogSource', obs(unknownNode(600), pod({ cs, ownerUid: 'uid-old' })), { kind: 'noop', reason: /recreated/ }],
    // ownerRef is not the controller
    ['non-controller ownerRef', obs(unknownNode(600), pod({ cs, controller: false })), { kind: 'noop', reason: /not controlled by/ }],
    // the CatalogSource is gone
    ['CatalogSource missing', obs(unknownNode(600), { pod: pod({ cs }).pod }), { kind: 'noop', reason: /no longer exists/ }],
    // a pod scheduled elsewhere
    ['pod on another node', obs(unknownNode(600), pod({ cs, nodeName: 'worker-2' })), { kind: 'noop', reason: /not on this node/ }],
    // no Ready transition time: no fence to compute
    ['node without Ready condition', obs(live({ apiVersion: 'v1', kind: 'Node', metadata: { name: NODE }, spec: {}, status: { conditions: [] } }), pod({ cs })), { kind: 'noop', reason: /cannot fence/ }],
    // every catalog pod on the node at once
    ['two catalogs on one dead node', obs(unknownNode(600), pod({ cs }), pod({ cs: other })), { kind: 'act', deletes: 2 }],
    // an opted-out catalog alone: asked for, so the executor refuses it with a Warning Event
    ['only an opted-out catalog', obs(unknownNode(600), pod({ cs: optedOut })), { kind: 'act', deletes: 1 }],
    // an opted-out catalog next to another: both are planned, each optional (the executor refuses only the opted-out one)
    ['opted-out catalog next to another', obs(unknownNode(600), pod({ cs: optedOut }), pod({ cs })), { kind: 'act', deletes: 2 }],
    // act beats defer: one pod overdue, one just marked
    ['one overdue, one deferred', obs(unknownNode(600), pod({ cs }), pod({ cs: other, disruptionAgo: 5 })), { kind: 'act', deletes: 1 }],
    // no catalog pods at all
    ['nothing on the node', obs(unknownNode(600)), { kind: 'noop', reason: /no catalog pods/ }],
  ])('%s', (_name, o, e, options) => {
    check(plan(o, ctx(options)), e);
  });

  it('every pod delete is optional: an opted-out catalog or a protected namespace never holds back the others', () => {
    const p = plan(obs(unknownNode(600), pod({ cs: optedOut }), pod({ cs })), ctx());
    expect(p.kind).toBe('act');
    expect((p as Extract<Plan, { kind: 'act' }>).actions.every((a) => a.optional === true)).toBe(true);
  });

  it('a pod that tolerates the taint forever (no tolerationSeconds) is never fenced out by time', () => {
    const f = pod({ cs });
    (f.pod.spec as { tolerations: unknown[] }).tolerations = [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }];
    expect(plan(obs(unknownNode(86_400), f), ctx())).toMatchObject({ kind: 'noop', reason: expect.stringMatching(/tolerates .* forever/) });
    // ...but a node that is gone, or out-of-service, still fences it out
    expect(plan({ ...obs(undefined, f), nodeMissingSince: NOW.getTime() / 1000 - 100 }, ctx()).kind).toBe('act');
    expect(plan(obs(unknownNode(10, [taintUnreachable(ago(10)), taintOutOfService()]), f), ctx()).kind).toBe('act');
  });

  it("a DisruptionTarget dated by a controller-manager clock behind counts from the delete the apiserver stamped (red team 32)", () => {
    // Condition 90 s old by the controller-manager's clock; the delete it made was asked 20 s ago by
    // the apiserver's (deletionTimestamp minus the 30 s grace): OLM's own 60 s grace has 40 s to go.
    const f = pod({ cs, disruptionAgo: 90 });
    f.pod.metadata = { ...f.pod.metadata, deletionTimestamp: rfc3339(ago(-10)), deletionGracePeriodSeconds: 30 };
    expect(plan(obs(unknownNode(90), f), ctx())).toMatchObject({ kind: 'defer', requeueAfterSeconds: 40 });
  });

  it('carries the uid (and resourceVersion) preconditions of the observed pod', () => {
    const f = pod({ cs });
    const p = plan(obs(unknownNode(600), f), ctx()) as Extract<Plan, { kind: 'act' }>;
    expect(p.actions[0]!.target).toMatchObject({ uid: f.pod.metadata.uid, resourceVersion: f.pod.metadata.resourceVersion, namespace: NS, name: f.pod.metadata.name });
    expect(p.actions[0]!.regarding).toMatchObject({ uid: cs.metadata.uid, name: cs.metadata.name });
  });
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

const arbNode = fc.option(
  fc.record({
    status: fc.constantFrom('True', 'False', 'Unknown', 'none'),
    since: fc.integer({ min: 0, max: 7200 }),
    outOfService: fc.boolean(),
  }),
  { nil: undefined },
);

const arbPod = fc.record({
  catalog: fc.constantFrom('a', 'b', 'c'),
  label: fc.constantFrom('match', 'empty', 'absent', 'other'),
  ownerKind: fc.constantFrom('CatalogSource', 'ReplicaSet'),
  controller: fc.boolean(),
  uidMatches: fc.boolean(),
  catalogExists: fc.boolean(),
  onNode: fc.boolean(),
  terminating: fc.boolean(),
  disruption: fc.option(fc.record({ status: fc.constantFrom('True', 'False'), age: fc.integer({ min: 0, max: 3600 }) }), { nil: undefined }),
  toleration: fc.option(fc.integer({ min: 0, max: 3600 }), { nil: undefined }),
  optOut: fc.boolean(),
});

type ArbNode = { status: string; since: number; outOfService: boolean } | undefined;
type ArbPod = typeof arbPod extends fc.Arbitrary<infer T> ? T : never;

function buildObserved(n: ArbNode, pods: ArbPod[]): Observed {
  const nodeObj = n
    ? live({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: NODE },
        spec: n.outOfService ? { taints: [taintOutOfService()] } : {},
        status: { conditions: n.status === 'none' ? [] : [{ type: 'Ready', status: n.status, lastTransitionTime: rfc3339(ago(n.since)) }] },
      })
    : undefined;
  const facts: PodFacts[] = pods.map((p) => {
    const cs = catsrc(p.catalog, p.optOut ? { 'olm-medic.io/ignore': 'true' } : undefined);
    const f = pod({ cs, nodeName: p.onNode ? NODE : 'elsewhere', terminating: p.terminating, ownerUid: p.uidMatches ? cs.metadata.uid! : 'uid-other', controller: p.controller, ...(p.toleration !== undefined ? { tolerationSeconds: p.toleration } : {}) });
    const labels = { ...f.pod.metadata.labels };
    if (p.label === 'empty') labels['olm.catalogSource'] = '';
    if (p.label === 'absent') delete labels['olm.catalogSource'];
    if (p.label === 'other') labels['olm.catalogSource'] = 'zzz';
    const owner = { ...f.pod.metadata.ownerReferences![0]!, kind: p.ownerKind };
    const status = p.disruption ? { conditions: [{ type: 'DisruptionTarget', status: p.disruption.status, reason: 'DeletionByTaintManager', lastTransitionTime: rfc3339(ago(p.disruption.age)) }] } : {};
    const podObj = { ...f.pod, metadata: { ...f.pod.metadata, labels, ownerReferences: [owner] }, status };
    return p.catalogExists ? { pod: podObj, catalogSource: cs } : { pod: podObj };
  });
  return { nodeName: NODE, ...(nodeObj ? { node: nodeObj } : {}), pods: facts };
}

const arbObserved = fc.tuple(arbNode, fc.array(arbPod, { maxLength: 5 })).map(([n, ps]) => buildObserved(n, ps));
const arbOptions = fc.record({ fenceMarginSeconds: fc.integer({ min: 0, max: 600 }), olmGraceSeconds: fc.integer({ min: 0, max: 600 }) });

function deletes(p: Plan): Extract<Action, { verb: 'delete' }>[] {
  return p.kind === 'act' ? p.actions.filter((a): a is Extract<Action, { verb: 'delete' }> => a.verb === 'delete') : [];
}

describe('catalog-reschedule plan: properties', () => {
  it('never a pod on a Ready node in any delete action', () => {
    fc.assert(
      fc.property(arbObserved, arbOptions, (o, options) => {
        const ready = o.node && (o.node.status as { conditions: { type: string; status: string }[] }).conditions.some((c) => c.type === 'Ready' && c.status === 'True');
        const d = deletes(plan(o, ctx(options)));
        if (ready) expect(d).toEqual([]);
        for (const a of d) {
          const f = o.pods.find((x) => x.pod.metadata.uid === a.target.uid)!;
          expect((f.pod.spec as { nodeName: string }).nodeName).toBe(o.nodeName);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('only ever deletes provable serving pods of an existing CatalogSource, with grace 0 and their uid', () => {
    fc.assert(
      fc.property(arbObserved, arbOptions, (o, options) => {
        const p = plan(o, ctx(options));
        if (p.kind === 'act') expect(p.actions.every((a) => a.verb === 'delete')).toBe(true);
        for (const a of deletes(p)) {
          const f = o.pods.find((x) => x.pod.metadata.uid === a.target.uid);
          expect(f).toBeDefined();
          expect(identityProblem(f!)).toBeUndefined();
          expect(a.gracePeriodSeconds).toBe(0);
          expect(a.regarding).toMatchObject({ kind: 'CatalogSource', uid: f!.catalogSource!.metadata.uid });
        }
      }),
      { numRuns: 500 },
    );
  });

  it('never acts inside the fence unless the node is gone, out-of-service, or the pod has DisruptionTarget=True', () => {
    fc.assert(
      fc.property(arbObserved, arbOptions, (o, options) => {
        for (const a of deletes(plan(o, ctx(options)))) {
          const f = o.pods.find((x) => x.pod.metadata.uid === a.target.uid)!;
          const conds = (o.node?.status as { conditions: { type: string; lastTransitionTime: string }[] } | undefined)?.conditions ?? [];
          const since = Date.parse(conds.find((c) => c.type === 'Ready')?.lastTransitionTime ?? '') / 1000;
          const tol = (f.pod.spec as { tolerations: { tolerationSeconds: number }[] }).tolerations[0]!.tolerationSeconds;
          const fenced = NOW.getTime() / 1000 >= since + tol + options.fenceMarginSeconds;
          const oos = ((o.node?.spec as { taints?: { key: string }[] } | undefined)?.taints ?? []).some((t) => t.key === 'node.kubernetes.io/out-of-service');
          const disrupted = ((f.pod.status as { conditions?: { type: string; status: string }[] }).conditions ?? []).some((c) => c.type === 'DisruptionTarget' && c.status === 'True');
          expect(!o.node || oos || disrupted || fenced).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('catalog-reschedule targets: what an event makes it look at', () => {
  const pod = (o: { ready?: string; deleting?: boolean; label?: boolean; node?: string }): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'cat-abcde', namespace: 'olm', uid: 'u', resourceVersion: '7', ...(o.label === false ? {} : { labels: { 'olm.catalogSource': 'cat' } }), ...(o.deleting ? { deletionTimestamp: '2026-11-22T10:00:00Z' } : {}) },
      spec: o.node === undefined ? { nodeName: 'worker-1' } : o.node ? { nodeName: o.node } : {},
      status: o.ready ? { conditions: [{ type: 'Ready', status: o.ready }] } : {},
    }) as KubeObject;
  const targetsOf = (obj: KubeObject | undefined, verb: 'add' | 'update' | 'delete' = 'update') =>
    catalogReschedule.targets({ kind: 'resource', verb, mode: 'resource', ref: { apiVersion: 'v1', kind: 'Pod', namespace: 'olm', name: 'cat-abcde' }, ...(obj ? { object: obj } : {}), meta: { id: 'x', source: 't', type: 't' } } as never);
  const node = [{ apiVersion: 'v1', kind: 'Node', name: 'worker-1' }];

  it.each([
    ['a Ready catalog pod (its node worked when this was written)', pod({ ready: 'True' }), []],
    ['a catalog pod marked NotReady (the node lifecycle controller)', pod({ ready: 'False' }), node],
    ['a catalog pod with no Ready condition', pod({}), node],
    ['a Ready catalog pod being deleted (taint eviction)', pod({ ready: 'True', deleting: true }), node],
    ['an unlabelled pod', pod({ ready: 'False', label: false }), []],
    ['an unscheduled catalog pod', pod({ ready: 'False', node: '' }), []],
  ])('%s', (_what, obj, want) => {
    expect(targetsOf(obj)).toEqual(want);
  });

  it('a Reference-mode event (no object) is looked up; a delete is not looked at; Node events are not declared', () => {
    expect(targetsOf(undefined)).toEqual([{ apiVersion: 'v1', kind: 'Pod', namespace: 'olm', name: 'cat-abcde' }]);
    expect(targetsOf(pod({ ready: 'False' }), 'delete')).toEqual([]);
    expect(catalogReschedule.kinds).toEqual(['v1/Pod']);
  });
});
