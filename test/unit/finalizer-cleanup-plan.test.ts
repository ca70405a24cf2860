/** finalizer-cleanup's pure plans: decision tables for both situations, and safety properties. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isCopiedCsv } from '../../shared/olm/olm.js';
import { defaults, DELETABLE, plan, type Component, type CsvObserved, type OperatorObserved } from '../../functions/finalizer-cleanup/plan.js';
import { NO_POLICY, type Action, type Plan, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import {
  CSV_CLEANUP_FINALIZER,
  componentLabels,
  csv,
  csvClusterRole,
  csvClusterRoleBinding,
  csvWebhook,
  operatorObject,
  rfc3339,
  subscription,
  type Obj,
} from '../fixtures/olm-objects.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const ago = (s: number) => new Date(NOW.getTime() - s * 1000);
const NS = 'operators';
const CSV_NAME = 'etcdoperator.v0.9.4';
const OURS = 'olm-medic.io/csv-cleanup';
const PKG = 'etcd';
const LABEL_KEY = `operators.coreos.com/${PKG}.${NS}`;
const ctx = (options: Record<string, number | boolean> = {}): PlanContext => ({ now: NOW, options: { ...defaults, ...options }, policy: NO_POLICY });

let seq = 0;
function live(o: Obj, extra: Partial<KubeObject['metadata']> = {}, createdAgo = 3600): KubeObject {
  seq++;
  const metadata = { name: o.metadata.name ?? `${o.metadata.generateName ?? 'x-'}${seq}`, uid: `uid-${seq}`, resourceVersion: String(1000 + seq), creationTimestamp: rfc3339(ago(createdAgo)), ...o.metadata, ...extra };
  delete metadata.generateName;
  return { ...o, metadata } as KubeObject;
}
const deleting = { deletionTimestamp: rfc3339(ago(5)) };

const theCsv = (o: { finalizers?: string[]; deleting?: boolean; copiedFrom?: string; phase?: 'Failed' | 'Succeeded' | ''; failedAgo?: number; labels?: Record<string, string> } = {}) =>
  live(
    csv({ namespace: NS, name: CSV_NAME, ...(o.copiedFrom ? { copiedFrom: o.copiedFrom } : {}), phase: o.phase ?? 'Succeeded', at: ago(o.failedAgo ?? 7200), ...(o.labels ? { labels: o.labels } : {}) }),
    { ...(o.finalizers ? { finalizers: o.finalizers } : {}), ...(o.deleting ? deleting : {}) },
  );
const cr = (createdAgo = 3600, extra: Partial<KubeObject['metadata']> = {}) => live(csvClusterRole({ csvName: CSV_NAME, csvNamespace: NS }), extra, createdAgo);
const crb = (createdAgo = 3600) => live(csvClusterRoleBinding({ csvName: CSV_NAME, csvNamespace: NS, roleName: 'r' }), {}, createdAgo);
const vwc = () => live(csvWebhook('Validating', { csvName: CSV_NAME, csvNamespace: NS }));
const csvRef = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', namespace: NS, name: CSV_NAME };
const csvObs = (c: KubeObject | undefined, owned: KubeObject[] = []): CsvObserved => ({ kind: 'csv', csvRef, ...(c ? { csv: c } : {}), owned });

type Act = Extract<Plan, { kind: 'act' }>;
const acts = (p: Plan): Action[] => (p.kind === 'act' ? p.actions : []);

interface Expect {
  kind: Plan['kind'];
  /** [verb, kind, reason] of each action, in order. */
  actions?: [string, string, string][];
  finalizers?: string[];
  after?: number;
  reason?: RegExp;
}
function check(p: Plan, e: Expect): void {
  expect(p.kind).toBe(e.kind);
  if (e.actions) expect(acts(p).map((a) => [a.verb, a.target.kind, a.reason])).toEqual(e.actions);
  if (e.finalizers) {
    const patch = acts(p).find((a) => a.verb === 'patch') as Extract<Action, { verb: 'patch' }>;
    expect(patch.patch).toEqual({ metadata: { finalizers: e.finalizers } });
    expect(patch.target.resourceVersion).toMatch(/^\d+$/);
  }
  if (e.after !== undefined) expect(p.kind === 'requeue' ? p.afterSeconds : (p as Act).requeueAfterSeconds).toBe(e.after);
  if (e.reason) expect(p.kind === 'noop' || p.kind === 'requeue' ? p.reason : `${(p as { reason?: string }).reason}: ${(p as { note?: string }).note}`).toMatch(e.reason);
}

describe('finalizer-cleanup plan A (CSV): decision table', () => {
  it.each<[string, CsvObserved, Expect, Record<string, number | boolean>?]>([
    // OLM < v0.27: no finalizer; add ours
    ['original CSV without finalizers', csvObs(theCsv()), { kind: 'act', actions: [['patch', 'ClusterServiceVersion', 'CsvFinalizerAdded']], finalizers: [OURS] }],
    // other finalizers are kept (a merge patch replaces the whole list)
    ['original CSV with a foreign finalizer', csvObs(theCsv({ finalizers: ['example.com/keep'] })), { kind: 'act', finalizers: ['example.com/keep', OURS] }],
    // OLM >= v0.27 cleans up itself
    ["CSV with OLM's csv-cleanup finalizer", csvObs(theCsv({ finalizers: [CSV_CLEANUP_FINALIZER] })), { kind: 'noop', reason: /cleanup finalizer/ }],
    // already ours
    ['CSV with our finalizer', csvObs(theCsv({ finalizers: [OURS] })), { kind: 'noop' }],
    // copies are OLM's to manage
    ['copied CSV', csvObs(theCsv({ copiedFrom: 'elsewhere' })), { kind: 'noop', reason: /copied/ }],
    // the option turns finalizer management off
    ['manageFinalizer=false', csvObs(theCsv()), { kind: 'noop', reason: /finalizer management is off/ }, { manageFinalizer: false }],
    // ... and releases ours where it holds one (the removal path)
    ['manageFinalizer=false, ours held', csvObs(theCsv({ finalizers: [OURS] })), { kind: 'act', actions: [['patch', 'ClusterServiceVersion', 'CsvFinalizerReleased']], finalizers: [] }, { manageFinalizer: false }],
    // OLM added its own after ours (OLM upgraded to v0.27+): defer to OLM, release ours
    ["both finalizers: ours is released to OLM", csvObs(theCsv({ finalizers: [CSV_CLEANUP_FINALIZER, OURS] })), { kind: 'act', finalizers: [CSV_CLEANUP_FINALIZER] }],
    // a brand-new CSV OLM has not synced yet: v0.27+ would add its own first; never race it
    ['unsynced CSV (no status.phase)', csvObs(theCsv({ phase: '' })), { kind: 'noop', reason: /not synced/ }],
    // another CSV in the namespace carries OLM's finalizer: this OLM manages them
    ['OLM finalizer seen on a sibling', { ...csvObs(theCsv()), olmFinalizerSeen: true }, { kind: 'noop', reason: /manages CSV cleanup/ }],
    // deleting with ours: delete every labelled object, look again in 2 s
    ['deleting, owned objects live', csvObs(theCsv({ finalizers: [OURS], deleting: true }), [cr(), crb(), vwc()]), {
      kind: 'act',
      after: 2,
      actions: [['delete', 'ClusterRole', 'CsvOwnedObjectDeleted'], ['delete', 'ClusterRoleBinding', 'CsvOwnedObjectDeleted'], ['delete', 'ValidatingWebhookConfiguration', 'CsvOwnedObjectDeleted']],
    }],
    // deleting with ours, one still finalizing: only the live one is deleted
    ['deleting, one owned object still finalizing', csvObs(theCsv({ finalizers: [OURS], deleting: true }), [cr(3600, deleting), crb()]), { kind: 'act', actions: [['delete', 'ClusterRoleBinding', 'CsvOwnedObjectDeleted']] }],
    // not confirmed gone: wait, keep the finalizer
    ['deleting, owned objects all finalizing', csvObs(theCsv({ finalizers: [OURS], deleting: true }), [cr(3600, deleting)]), { kind: 'requeue', after: 2 }],
    // confirmed gone: remove ours, keep any other finalizer
    ['deleting, nothing left', csvObs(theCsv({ finalizers: ['example.com/keep', OURS], deleting: true })), { kind: 'act', actions: [['patch', 'ClusterServiceVersion', 'CsvCleanupCompleted']], finalizers: ['example.com/keep'] }],
    // deleting without ours: the orphan sweep handles it once gone
    ['deleting without our finalizer', csvObs(theCsv({ finalizers: [CSV_CLEANUP_FINALIZER], deleting: true }), [cr()]), { kind: 'noop', reason: /without our finalizer/ }],
    // CSV gone: old labelled objects are orphans
    ['CSV gone, old orphans', csvObs(undefined, [cr(3600), crb(3600)]), { kind: 'act', actions: [['delete', 'ClusterRole', 'CsvLeftoverDeleted'], ['delete', 'ClusterRoleBinding', 'CsvLeftoverDeleted']] }],
    // CSV gone, objects younger than orphanGraceSeconds: maybe an install in progress
    ['CSV gone, young objects', csvObs(undefined, [cr(30)]), { kind: 'requeue', after: 120 }],
    // with orphanGraceSeconds 0 they count at once
    ['CSV gone, young objects, grace 0', csvObs(undefined, [cr(0)]), { kind: 'act', actions: [['delete', 'ClusterRole', 'CsvLeftoverDeleted']] }, { orphanGraceSeconds: 0 }],
    // CSV gone, objects already finalizing: nothing to do
    ['CSV gone, orphans already deleting', csvObs(undefined, [cr(3600, deleting)]), { kind: 'noop' }],
    // CSV gone, nothing left
    ['CSV gone, nothing labelled', csvObs(undefined), { kind: 'noop', reason: /left nothing behind/ }],
  ])('%s', (_n, o, e, options) => {
    check(plan(o, ctx(options)), e);
  });

  it('orphan deletes name the CSV and carry no regarding (the Event is about the orphan itself)', () => {
    const p = plan(csvObs(undefined, [cr()]), ctx()) as Act;
    expect(p.actions[0]!.regarding).toBeUndefined();
    expect(p.actions[0]!.note).toContain(`CSV ${NS}/${CSV_NAME}, which no longer exists`);
  });
});

// ---------------------------------------------------------------------------------------------
// Situation B
// ---------------------------------------------------------------------------------------------

const labels = componentLabels(PKG, NS);
const comp = (apiVersion: string, kind: string, name: string, o: { labelled?: boolean; deleting?: boolean; namespaced?: boolean } = {}) =>
  live({ apiVersion, kind, metadata: { name, ...(o.namespaced === false ? {} : { namespace: NS }), ...(o.labelled === false ? {} : { labels }) } }, o.deleting ? deleting : {});
const crd = (o: { labelled?: boolean } = {}) => comp('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'etcdclusters.etcd.database.coreos.com', { namespaced: false, ...o });
const deploy = (o: { labelled?: boolean; deleting?: boolean } = {}) => comp('apps/v1', 'Deployment', 'etcd-operator', o);
const cm = (o: { labelled?: boolean } = {}) => comp('v1', 'ConfigMap', 'etcd-config', o);
const installPlan = (o: { deleting?: boolean } = {}) => comp('operators.coreos.com/v1alpha1', 'InstallPlan', 'install-abcde', o);
const nsObj = () => comp('v1', 'Namespace', NS, { namespaced: false });
const sub = (o: { deleting?: boolean } = {}) => live(subscription({ namespace: NS, name: PKG, package: PKG, source: 'community', sourceNamespace: 'olm' }), o.deleting ? deleting : {});

function operator(o: { annotate?: boolean; deleting?: boolean } = {}): KubeObject {
  const b = operatorObject({ pkg: PKG, namespace: NS, refs: [] });
  if (o.annotate) b.metadata.annotations = { 'olm-medic.io/uninstall': 'true' };
  return live(b, o.deleting ? deleting : {});
}
function opObs(o: { annotate?: boolean; opDeleting?: boolean; subs?: KubeObject[]; csvs?: KubeObject[]; components?: KubeObject[] }): OperatorObserved {
  return {
    kind: 'operator',
    operator: operator({ ...(o.annotate ? { annotate: true } : {}), ...(o.opDeleting ? { deleting: true } : {}) }),
    labelKey: LABEL_KEY,
    // observe() keeps only live, non-deleting Subscriptions that claim the label key
    claimants: (o.subs ?? []).filter((s) => !s.metadata.deletionTimestamp),
    csvs: o.csvs ?? [],
    components: (o.components ?? []).map(asComponent),
  };
}
function asComponent(x: KubeObject): Component {
  return { ref: { apiVersion: x.apiVersion, kind: x.kind, name: x.metadata.name, ...(x.metadata.namespace ? { namespace: x.metadata.namespace } : {}) }, live: x };
}
const failed = (secondsAgo = 7200) => theCsv({ phase: 'Failed', failedAgo: secondsAgo, labels });

describe('finalizer-cleanup plan B (Operator): status not yet populated', () => {
  it('does nothing while OLM has not written status.components (an annotated Operator created before its status)', () => {
    const o = opObs({ annotate: true });
    delete (o as { labelKey?: string }).labelKey;
    expect(plan(o, { now: new Date(), options: {}, policy: NO_POLICY })).toMatchObject({ kind: 'noop', reason: /not reported the components/ });
  });
});

describe('finalizer-cleanup plan B (Operator): decision table', () => {
  it.each<[string, OperatorObserved, Expect, Record<string, number | boolean>?]>([
    // requested: deletables go, CSV first; the CRD is not deleted
    ['annotated: CSV, Deployment, CRD', opObs({ annotate: true, csvs: [failed()], components: [deploy(), crd(), failed()] }), {
      kind: 'act',
      after: 2,
      // the CSV first, alone: while it exists OLM recreates its parts (OperatorConditions, deployment)
      actions: [['delete', 'ClusterServiceVersion', 'OperatorLeftoverDeleted']],
    }],
    // an InstallPlan before the CSV: a plan still Installing re-creates a CSV deleted under it (real OLM v0.25.0)
    ['annotated: InstallPlan, CSV, Deployment', opObs({ annotate: true, csvs: [failed()], components: [deploy(), failed(), installPlan()] }), {
      kind: 'act',
      after: 1,
      actions: [['delete', 'InstallPlan', 'OperatorLeftoverDeleted']],
    }],
    ['annotated: InstallPlan finishing its deletion, CSV', opObs({ annotate: true, csvs: [failed()], components: [failed(), installPlan({ deleting: true })] }), { kind: 'requeue', after: 1 }],
    // an unfinished plan that is not ours to delete but lists the CSV: wait (OLM would re-create the CSV), the CSV stays
    ['annotated: CSV listed by an unfinished InstallPlan', { ...opObs({ annotate: true, csvs: [failed()], components: [failed(), deploy()] }), unfinishedPlans: [{ plan: 'install-xyz', namespace: NS, csv: CSV_NAME, phase: 'Installing' }] }, { kind: 'requeue', after: 2 }],
    // an unfinished plan listing another CSV does not hold this one
    ['annotated: an unfinished InstallPlan of another CSV', { ...opObs({ annotate: true, csvs: [failed()], components: [failed()] }), unfinishedPlans: [{ plan: 'install-xyz', namespace: NS, csv: 'other.v1.0.0', phase: 'Installing' }] }, { kind: 'act', actions: [['delete', 'ClusterServiceVersion', 'OperatorLeftoverDeleted']] }],
    // a Subscription still exists: OLM would reinstall; refuse with guidance
    ['annotated but subscribed', opObs({ annotate: true, subs: [sub()], components: [deploy()] }), { kind: 'refuse', reason: /UninstallLeftoversKept/ }],
    // a Subscription that is itself being deleted does not count
    ['annotated, Subscription deleting', opObs({ annotate: true, subs: [sub({ deleting: true })], components: [deploy()] }), { kind: 'act', actions: [['delete', 'Deployment', 'OperatorLeftoverDeleted']] }],
    // not requested, no Subscription, CSV Failed for 2 h: tell the user how
    ['no annotation, long-Failed CSV', opObs({ csvs: [failed()] }), { kind: 'refuse', reason: /Annotate Operator etcd\.operators with olm-medic\.io\/uninstall=true/ }],
    // not requested, CSV Failed for a minute: quiet
    ['no annotation, freshly Failed CSV', opObs({ csvs: [failed(60)] }), { kind: 'noop', reason: /no long-failed CSV/ }],
    // not requested, CSV Succeeded (e.g. only the Subscription was deleted): quiet
    ['no annotation, Succeeded CSV', opObs({ csvs: [theCsv({ labels })] }), { kind: 'noop' }],
    // not requested and subscribed: an installed operator
    ['no annotation, subscribed', opObs({ subs: [sub()], csvs: [failed()] }), { kind: 'noop', reason: /subscribed/ }],
    // the grace is an option
    ['no annotation, Failed 2 h, grace 3 h', opObs({ csvs: [failed()] }), { kind: 'noop' }, { failedCsvGraceSeconds: 10_800 }],
    // opted in: records the decision first, so it survives the CSV's deletion
    ['autoUninstall, long-Failed CSV', opObs({ csvs: [failed()], components: [failed(), deploy()] }), { kind: 'act', actions: [['patch', 'Operator', 'AutoUninstallStarted']], after: 1 }, { autoUninstall: true }],
    // opted in but subscribed: nothing
    ['autoUninstall, subscribed', opObs({ subs: [sub()], csvs: [failed()], components: [deploy()] }), { kind: 'noop' }, { autoUninstall: true }],
    // leftovers still finalizing: wait
    ['annotated, Deployment finalizing', opObs({ annotate: true, components: [deploy({ deleting: true }), crd()] }), { kind: 'requeue', after: 2 }],
    // only kept kinds left: remove the label so OLM does not recreate the Operator
    ['annotated, CRD and Namespace left', opObs({ annotate: true, components: [crd(), nsObj()] }), {
      kind: 'act',
      actions: [['patch', 'CustomResourceDefinition', 'ComponentLabelRemoved'], ['patch', 'Namespace', 'ComponentLabelRemoved']],
    }],
    // a ref that lost the label is not ours any more: neither deleted nor patched
    ['annotated, only an unlabelled ConfigMap', opObs({ annotate: true, components: [cm({ labelled: false }), crd({ labelled: false })] }), { kind: 'act', actions: [['delete', 'Operator', 'OperatorDeleted']] }],
    // everything gone: the Operator object goes last
    ['annotated, nothing left', opObs({ annotate: true }), { kind: 'act', actions: [['delete', 'Operator', 'OperatorDeleted']] }],
    // the Operator is already being deleted
    ['Operator deleting', opObs({ annotate: true, opDeleting: true, components: [deploy()] }), { kind: 'noop', reason: /being deleted/ }],
  ])('%s', (_n, o, e, options) => {
    check(plan(o, ctx(options)), e);
  });

  it('removes the label with a null in a merge patch, with the resourceVersion precondition', () => {
    const c = crd();
    const p = plan(opObs({ annotate: true, components: [c] }), ctx()) as Act;
    const a = p.actions[0] as Extract<Action, { verb: 'patch' }>;
    expect(a.patch).toEqual({ metadata: { labels: { [LABEL_KEY]: null } } });
    expect(a.target.resourceVersion).toBe(c.metadata.resourceVersion);
    expect(a.regarding).toMatchObject({ kind: 'Operator', name: `${PKG}.${NS}` });
  });
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

const OWNED_KIND = fc.constantFrom(
  ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
  ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'],
  ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'],
  ['apiregistration.k8s.io/v1', 'APIService'],
);
const FINALIZER = fc.constantFrom(OURS, CSV_CLEANUP_FINALIZER, 'example.com/other');

const arbCsvObserved = fc
  .record({
    exists: fc.boolean(),
    finalizers: fc.uniqueArray(FINALIZER, { maxLength: 3 }),
    deleting: fc.boolean(),
    copied: fc.boolean(),
    owned: fc.array(fc.record({ kind: OWNED_KIND, age: fc.integer({ min: 0, max: 7200 }), deleting: fc.boolean() }), { maxLength: 5 }),
  })
  .map((r): CsvObserved => {
    const c = r.exists ? theCsv({ finalizers: r.finalizers, deleting: r.deleting, ...(r.copied ? { copiedFrom: 'elsewhere' } : {}) }) : undefined;
    const owned = r.owned.map((x, i) => live({ apiVersion: x.kind[0]!, kind: x.kind[1]!, metadata: { name: `obj-${i}` } }, x.deleting ? deleting : {}, x.age));
    return csvObs(c, owned);
  });

const COMPONENT_KIND = fc.constantFrom(
  ['operators.coreos.com/v1alpha1', 'ClusterServiceVersion'],
  ['apps/v1', 'Deployment'],
  ['v1', 'ServiceAccount'],
  ['v1', 'ConfigMap'],
  ['v1', 'Secret'],
  ['v1', 'Service'],
  ['v1', 'Namespace'],
  ['rbac.authorization.k8s.io/v1', 'Role'],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
  ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
  ['apiregistration.k8s.io/v1', 'APIService'],
  ['operators.coreos.com/v1alpha1', 'Subscription'],
  ['operators.coreos.com/v1alpha1', 'InstallPlan'],
);

const arbOperatorObserved = fc
  .record({
    annotate: fc.boolean(),
    opDeleting: fc.boolean(),
    subs: fc.array(fc.boolean(), { maxLength: 2 }),
    csvs: fc.array(fc.record({ phase: fc.constantFrom('Failed' as const, 'Succeeded' as const), age: fc.integer({ min: 0, max: 20_000 }) }), { maxLength: 2 }),
    components: fc.array(fc.record({ kind: COMPONENT_KIND, labelled: fc.boolean(), deleting: fc.boolean() }), { maxLength: 8 }),
  })
  .map((r) =>
    opObs({
      annotate: r.annotate,
      opDeleting: r.opDeleting,
      subs: r.subs.map((d) => sub({ deleting: d })),
      csvs: r.csvs.map((c) => theCsv({ phase: c.phase, failedAgo: c.age, labels })),
      components: r.components.map((c, i) => comp(c.kind[0]!, c.kind[1]!, `c-${i}`, { labelled: c.labelled, deleting: c.deleting })),
    }),
  );

const arbOptions = fc.record({
  autoUninstall: fc.boolean(),
  manageFinalizer: fc.boolean(),
  orphanGraceSeconds: fc.integer({ min: 0, max: 600 }),
  failedCsvGraceSeconds: fc.integer({ min: 0, max: 20_000 }),
});

describe('finalizer-cleanup plan: properties', () => {
  it('never a finalizer removal while a cleanable owned object remains, unless the cleanup is not ours to do', () => {
    fc.assert(
      fc.property(arbCsvObserved, arbOptions, (o, options) => {
        for (const a of acts(plan(o, ctx(options)))) {
          if (a.verb !== 'patch') continue;
          const had = o.csv?.metadata.finalizers?.includes(OURS) ?? false;
          const keeps = ((a.patch.metadata as { finalizers?: string[] }).finalizers ?? []).includes(OURS);
          const notOurs = options.manageFinalizer === false || (o.csv?.metadata.finalizers ?? []).includes(CSV_CLEANUP_FINALIZER) || o.csv?.metadata.annotations?.['olm-medic.io/ignore'] === 'true' || (o.csv !== undefined && isCopiedCsv(o.csv));
          if (had && !keeps) {
            expect(a.releasesOwnFinalizer).toBe(true);
            if (!notOurs) expect(o.owned.filter((x) => x.metadata.annotations?.['olm-medic.io/ignore'] !== 'true')).toEqual([]);
          }
          // and never drops anybody else's finalizer
          for (const f of o.csv?.metadata.finalizers ?? []) if (f !== OURS) expect((a.patch.metadata as { finalizers: string[] }).finalizers).toContain(f);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('never a CRD in a delete action (CSV or Operator plans)', () => {
    fc.assert(
      fc.property(fc.oneof(arbCsvObserved, arbOperatorObserved), arbOptions, (o, options) => {
        for (const a of acts(plan(o, ctx(options)))) {
          if (a.verb === 'delete') expect(a.target.kind).not.toBe('CustomResourceDefinition');
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('an uninstall deletes only labelled DELETABLE kinds (or the Operator, last and alone), and nothing while a live Subscription exists', () => {
    fc.assert(
      fc.property(arbOperatorObserved, arbOptions, (o, options) => {
        const d = acts(plan(o, ctx(options))).filter((a) => a.verb === 'delete');
        // every claimant here is in the Operator's namespace NS: nothing of NS may go
        if (o.claimants.length) expect(d.filter((a) => a.target.kind === 'Operator' || a.target.namespace === NS)).toEqual([]);
        for (const a of d) {
          if (a.target.kind === 'Operator') {
            expect(d).toHaveLength(1);
            expect(o.components.filter((c) => c.live?.metadata.labels?.[LABEL_KEY] !== undefined)).toEqual([]);
            continue;
          }
          expect(DELETABLE.has(a.target.kind)).toBe(true);
          const c = o.components.find((x) => x.live?.metadata.uid === a.target.uid)!.live!;
          expect(c.metadata.labels?.[LABEL_KEY]).toBe('');
          // never an object another operator's component label is on
          expect(Object.keys(c.metadata.labels ?? {}).filter((k) => k.startsWith('operators.coreos.com/') && k !== LABEL_KEY)).toEqual([]);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('an original CSV that is not being deleted only ever gains our finalizer', () => {
    fc.assert(
      fc.property(arbCsvObserved, arbOptions, (o, options) => {
        if (!o.csv || o.csv.metadata.deletionTimestamp) return;
        for (const a of acts(plan(o, ctx(options)))) {
          if (a.verb !== 'patch') throw new Error(`unexpected ${a.verb} of ${a.target.kind}`);
          const before = o.csv.metadata.finalizers ?? [];
          const after = (a.patch.metadata as { finalizers: string[] }).finalizers;
          // gains ours, or (released to OLM / management off) loses ours; nothing else changes
          if (before.includes(OURS)) expect(after).toEqual(before.filter((f) => f !== OURS));
          else expect(after).toEqual([...before, OURS]);
        }
      }),
      { numRuns: 500 },
    );
  });
});
