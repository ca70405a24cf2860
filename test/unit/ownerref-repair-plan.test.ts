/**
 * ownerref-repair's pure plan(): a table of situations (olm-facts §2) and properties.
 * Objects come from the fixture builders (as OLM writes them) plus uid/resourceVersion.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { claimHeld, plan, type Observed } from '../../functions/ownerref-repair/plan.js';
import { NO_POLICY, type Plan, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject, OwnerReference } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';

const NOW = new Date('2025-06-01T12:00:00Z');
const ctx: PlanContext = { now: NOW, options: {}, policy: NO_POLICY };
const NS = 'operators';
const IP_NAME = 'install-7gq2x';
const IP_UID = 'ip-2';
const CSV_PROM = 'prometheusoperator.0.47.0';
const CSV_GRAFANA = 'grafana-operator.v4.1.0';
const LABEL_PROM = olm.componentLabelKey('prometheus', NS);
const LABEL_ETCD = olm.componentLabelKey('etcd', NS);

let rv = 100;
const k = (o: olm.Obj, uid: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject =>
  ({ ...o, metadata: { ...o.metadata, uid, resourceVersion: String(++rv), ...extra } }) as KubeObject;

interface SubOpts {
  name: string;
  pkg?: string;
  /** What its status.installPlanRef says. */
  ref?: 'ip' | 'other' | 'none';
  refUid?: string;
  /** status.installplan.uuid, when it differs from installPlanRef.uid. */
  uuid?: string;
  refNamespace?: string;
  currentCSV?: string;
  generatedBy?: string;
  deleting?: boolean;
}

function sub(o: SubOpts): KubeObject {
  const s = olm.subscription({ namespace: NS, name: o.name, package: o.pkg ?? o.name, source: 'operatorhubio-catalog', sourceNamespace: 'olm', ...(o.generatedBy ? { annotations: { 'olm.generated-by': o.generatedBy } } : {}) });
  const ref = o.ref ?? 'ip';
  const ip = ref === 'none' ? undefined : { name: ref === 'ip' ? IP_NAME : 'install-old01', namespace: o.refNamespace ?? NS, uid: o.refUid ?? (ref === 'ip' ? IP_UID : 'ip-1') };
  s.status = olm.subscriptionStatus({ at: NOW, ...(o.currentCSV ? { currentCSV: o.currentCSV } : {}), ...(ip ? { installPlan: ip, state: 'UpgradePending', installPlanGeneration: 2 } : {}) });
  if (o.uuid) s.status.installplan.uuid = o.uuid;
  return k(s, `sub-${o.name}`, o.deleting ? { deletionTimestamp: olm.rfc3339(NOW) } : {});
}

const owner = (name: string, uid = `sub-${name}`): OwnerReference => ({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', name, uid, controller: false, blockOwnerDeletion: false });

function installPlan(o: { owners?: OwnerReference[]; labels?: Record<string, string>; csvs?: string[]; deleting?: boolean; ageSeconds?: number } = {}): KubeObject {
  const ip = olm.installPlan({ namespace: NS, name: IP_NAME, csvNames: o.csvs ?? [CSV_PROM], approval: 'Manual', approved: false, generation: 2, ...(o.labels ? { labels: o.labels } : {}) });
  ip.status = olm.installPlanStatus({ phase: 'RequiresApproval', catalogSources: ['operatorhubio-catalog'] });
  // created an hour ago unless said otherwise (OLM's adoption controller has had its chance to label it)
  return k(ip, IP_UID, { ownerReferences: o.owners ?? [owner('etcd')], creationTimestamp: olm.rfc3339(new Date(NOW.getTime() - (o.ageSeconds ?? 3600) * 1000)), ...(o.deleting ? { deletionTimestamp: olm.rfc3339(NOW) } : {}) });
}

const etcd = () => sub({ name: 'etcd', ref: 'other', currentCSV: 'etcdoperator.v0.9.4' });
const prom = (o: Partial<SubOpts> = {}) => sub({ name: 'prometheus', currentCSV: CSV_PROM, ...o });

interface Want {
  owners?: string[];
  labels?: string[];
  reason?: string;
}
/** The metadata of the single merge patch an acting plan must consist of. */
function patchOf(p: Extract<Plan, { kind: 'act' }>): { ownerReferences?: OwnerReference[]; labels?: Record<string, string> } {
  const [a, ...rest] = p.actions;
  if (!a || rest.length || a.verb !== 'patch') throw new Error('exactly one patch expected');
  return a.patch.metadata as { ownerReferences?: OwnerReference[]; labels?: Record<string, string> };
}

function summary(p: Plan): Want | string {
  if (p.kind !== 'act') return p.kind;
  const a = p.actions[0]!;
  const md = patchOf(p);
  return {
    ...(md.ownerReferences ? { owners: md.ownerReferences.map((r) => r.name) } : {}),
    ...(md.labels ? { labels: Object.keys(md.labels) } : {}),
    reason: a.reason,
  };
}

describe('ownerref-repair plan()', () => {
  it.each<[string, Observed, Want | string]>([
    // #3199: the gen-2 plan is owned by etcd only while prometheus points at it: add prometheus, keep etcd, label it.
    ['missing owner', { installPlan: installPlan(), subscriptions: [etcd(), prom()] }, { owners: ['etcd', 'prometheus'], labels: [LABEL_PROM], reason: 'InstallPlanOwnerAdded' }],
    // Already owned, label present: nothing to do.
    ['complete', { installPlan: installPlan({ owners: [owner('etcd'), owner('prometheus')], labels: { [LABEL_PROM]: '' } }), subscriptions: [etcd(), prom()] }, 'noop'],
    // Owned but the adoption label is missing: restore the label only.
    ['label missing', { installPlan: installPlan({ owners: [owner('etcd'), owner('prometheus')] }), subscriptions: [etcd(), prom()] }, { labels: [LABEL_PROM], reason: 'InstallPlanLabelRestored' }],
    // A fresh plan: OLM's adoption controller adds the label itself in a moment (a healthy install sees no write).
    ['label missing on a 10 s old plan', { installPlan: installPlan({ owners: [owner('etcd'), owner('prometheus')], ageSeconds: 10 }), subscriptions: [etcd(), prom()] }, 'requeue'],
    // installPlanRef carries another uid (a previous plan of that name): not this plan's.
    ['installPlanRef uid mismatch', { installPlan: installPlan(), subscriptions: [etcd(), prom({ refUid: 'ip-0' })] }, 'noop'],
    // The deprecated status.installplan.uuid disagrees: not provably this plan.
    ['installplan.uuid mismatch', { installPlan: installPlan(), subscriptions: [etcd(), prom({ uuid: 'ip-0' })] }, 'noop'],
    // installPlanRef names another namespace.
    ['installPlanRef namespace mismatch', { installPlan: installPlan(), subscriptions: [etcd(), prom({ refNamespace: 'elsewhere' })] }, 'noop'],
    // currentCSV not in clusterServiceVersionNames: the plan does not serve it.
    ['currentCSV not in plan', { installPlan: installPlan(), subscriptions: [etcd(), prom({ currentCSV: 'prometheusoperator.0.47.1' })] }, 'noop'],
    // No currentCSV at all.
    ['no currentCSV', { installPlan: installPlan(), subscriptions: [etcd(), sub({ name: 'prometheus' })] }, 'noop'],
    // A dependency Subscription OLM generated from this plan (olm.generated-by) is served by it.
    ['generated-by this plan', { installPlan: installPlan(), subscriptions: [etcd(), sub({ name: 'dep', currentCSV: 'dep.v1', generatedBy: IP_NAME })] }, { owners: ['etcd', 'dep'], labels: [olm.componentLabelKey('dep', NS)], reason: 'InstallPlanOwnerAdded' }],
    // A Subscription that points elsewhere is not added.
    ['points elsewhere', { installPlan: installPlan(), subscriptions: [etcd(), prom({ ref: 'other' })] }, 'noop'],
    // No installPlanRef yet.
    ['no installPlanRef', { installPlan: installPlan(), subscriptions: [etcd(), prom({ ref: 'none' })] }, 'noop'],
    // A Subscription being deleted is never added as owner.
    ['subscription being deleted', { installPlan: installPlan(), subscriptions: [etcd(), prom({ deleting: true })] }, 'noop'],
    // The plan itself is being deleted.
    ['plan being deleted', { installPlan: installPlan({ deleting: true }), subscriptions: [etcd(), prom()] }, 'noop'],
    // Two missing Subscriptions: both added in one patch, existing owner first.
    ['two missing', { installPlan: installPlan({ csvs: [CSV_PROM, CSV_GRAFANA] }), subscriptions: [etcd(), prom(), sub({ name: 'grafana', pkg: 'grafana-operator', currentCSV: CSV_GRAFANA })] },
      { owners: ['etcd', 'prometheus', 'grafana'], labels: [LABEL_PROM, olm.componentLabelKey('grafana-operator', NS)], reason: 'InstallPlanOwnerAdded' }],
    // A recreated Subscription (same name, new uid) is a different owner: added next to the stale reference.
    ['recreated subscription', { installPlan: installPlan({ owners: [owner('etcd'), owner('prometheus', 'sub-prometheus-old')], labels: { [LABEL_PROM]: '' } }), subscriptions: [etcd(), prom()] },
      { owners: ['etcd', 'prometheus', 'prometheus'], reason: 'InstallPlanOwnerAdded' }],
    // Nobody references the plan.
    ['unreferenced', { installPlan: installPlan(), subscriptions: [etcd()] }, 'noop'],
  ])('%s', (_name, o, want) => {
    expect(summary(plan(o, ctx))).toEqual(want);
  });

  it('patches with the plan\'s resourceVersion, keeps existing owners verbatim, adds a non-blocking non-controller owner', () => {
    const foreign: OwnerReference = { apiVersion: 'example.com/v1', kind: 'Thing', name: 't', uid: 'thing-1', controller: true, blockOwnerDeletion: true };
    const ip = installPlan({ owners: [owner('etcd'), foreign], labels: { [LABEL_ETCD]: '' } });
    const p = plan({ installPlan: ip, subscriptions: [etcd(), prom()] }, ctx);
    if (p.kind !== 'act') throw new Error(p.kind);
    expect(p.actions[0]).toMatchObject({ verb: 'patch', target: { kind: 'InstallPlan', name: IP_NAME, uid: IP_UID, resourceVersion: ip.metadata.resourceVersion } });
    expect(patchOf(p).ownerReferences).toEqual([owner('etcd'), foreign, owner('prometheus')]);
    // Only the missing label, so the merge patch never touches the others.
    expect(patchOf(p).labels).toEqual({ [LABEL_PROM]: '' });
  });

  it('a long package name uses OLM\'s truncated component label key', () => {
    const pkg = 'a-very-long-operator-package-name-that-goes-on-and-on';
    const p = plan({ installPlan: installPlan(), subscriptions: [prom({ pkg })] }, ctx);
    const key = olm.componentLabelKey(pkg, NS);
    expect(key.length - 'operators.coreos.com/'.length).toBeLessThanOrEqual(63);
    expect(summary(p)).toMatchObject({ labels: [key] });
  });
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

const subModel = fc.record({
  ref: fc.constantFrom<'ip' | 'other' | 'none'>('ip', 'ip', 'other', 'none'),
  uidOk: fc.constantFrom(true, true, true, false),
  csv: fc.constantFrom(CSV_PROM, CSV_GRAFANA, 'other.v1', undefined),
  generatedBy: fc.constantFrom(undefined, undefined, undefined, IP_NAME),
  deleting: fc.constantFrom(false, false, false, true),
  /** Already an owner of the plan. */
  owning: fc.boolean(),
  pkg: fc.constantFrom('prometheus', 'grafana-operator', 'etcd'),
});

const worldModel = fc.record({
  subs: fc.array(subModel, { maxLength: 4 }),
  foreignOwner: fc.boolean(),
  labelled: fc.subarray(['prometheus', 'grafana-operator', 'etcd']),
  csvs: fc.subarray([CSV_PROM, CSV_GRAFANA], { minLength: 1 }),
});
type ArbValue<A> = A extends fc.Arbitrary<infer T> ? T : never;

function build(m: ArbValue<typeof worldModel>): Observed {
  const subs = m.subs.map((s, i) =>
    sub({ name: `s${i}`, pkg: s.pkg, ref: s.ref, ...(s.uidOk ? {} : { refUid: 'ip-0' }), ...(s.csv ? { currentCSV: s.csv } : {}), ...(s.generatedBy ? { generatedBy: s.generatedBy } : {}), deleting: s.deleting }),
  );
  const owners = [
    ...(m.foreignOwner ? [{ apiVersion: 'example.com/v1', kind: 'Thing', name: 't', uid: 'thing-1' }] : []),
    ...m.subs.flatMap((s, i) => (s.owning ? [owner(`s${i}`)] : [])),
  ];
  const labels = Object.fromEntries(m.labelled.map((p) => [olm.componentLabelKey(p, NS), '']));
  return { installPlan: installPlan({ owners, labels, csvs: m.csvs }), subscriptions: subs };
}

/** The apiserver's JSON merge patch on metadata (lists replace, maps merge). */
function apply(o: Observed, p: Extract<Plan, { kind: 'act' }>): Observed {
  const md = patchOf(p);
  const ip = o.installPlan;
  return {
    ...o,
    installPlan: {
      ...ip,
      metadata: {
        ...ip.metadata,
        resourceVersion: String(++rv),
        ...(md.ownerReferences ? { ownerReferences: md.ownerReferences } : {}),
        ...(md.labels ? { labels: { ...ip.metadata.labels, ...md.labels } } : {}),
      },
    },
  };
}

describe('ownerref-repair plan() properties', () => {
  it('applying the planned patch to the observed state and re-planning yields noop', () => {
    fc.assert(
      fc.property(worldModel, (m) => {
        const o = build(m);
        const first = plan(o, ctx);
        expect(plan(o, ctx)).toEqual(first);
        if (first.kind === 'act') expect(plan(apply(o, first), ctx).kind).toBe('noop');
        else expect(first.kind).toBe('noop');
      }),
      { numRuns: 1000 },
    );
  });

  it('a claim held on the plan\'s metadata alone means the full plan is noop for that Subscription; a metadata-only observation never acts', () => {
    let held = 0;
    let notHeld = 0;
    fc.assert(
      fc.property(worldModel, (m) => {
        const o = build(m);
        const { spec: _spec, status: _status, ...meta } = o.installPlan; // what a metadata list returns
        for (const s of o.subscriptions) {
          const h = claimHeld(s, meta as KubeObject);
          if (h) {
            held++;
            expect(plan({ installPlan: o.installPlan, subscriptions: [s] }, ctx).kind).toBe('noop');
          } else notHeld++;
          const p = plan({ installPlan: meta as KubeObject, subscriptions: [s], metadataOnly: true }, ctx);
          expect(p.kind).toBe(h || o.installPlan.metadata.deletionTimestamp ? 'noop' : 'requeue');
        }
      }),
      { numRuns: 1000 },
    );
    expect(held).toBeGreaterThan(50);
    expect(notHeld).toBeGreaterThan(50);
  });

  it('claimHeld needs the plan the Subscription names by uid, its owner and its component label', () => {
    const ip = installPlan({ owners: [owner('etcd'), owner('prometheus')], labels: { [LABEL_PROM]: '' } });
    expect(claimHeld(prom(), ip)).toBe(true);
    expect(claimHeld(prom({ refUid: 'ip-other' }), ip)).toBe(false);
    expect(claimHeld(prom(), installPlan({ owners: [owner('etcd')], labels: { [LABEL_PROM]: '' } }))).toBe(false);
    expect(claimHeld(prom(), installPlan({ owners: [owner('etcd'), owner('prometheus')] }))).toBe(false);
    expect(claimHeld(prom({ ref: 'none' }), ip)).toBe(false);
    expect(claimHeld(prom({ ref: 'other' }), ip)).toBe(false);
  });

  it('never drops or alters an existing owner, never adds a controller or blocking owner, never adds a Subscription that does not reference the plan by uid', () => {
    fc.assert(
      fc.property(worldModel, (m) => {
        const o = build(m);
        const p = plan(o, ctx);
        if (p.kind !== 'act') return;
        const before = o.installPlan.metadata.ownerReferences ?? [];
        const refs = patchOf(p).ownerReferences;
        if (!refs) return;
        expect(refs.slice(0, before.length)).toEqual(before);
        for (const added of refs.slice(before.length)) {
          expect([added.controller, added.blockOwnerDeletion, added.kind]).toEqual([false, false, 'Subscription']);
          const s = o.subscriptions.find((x) => x.metadata.uid === added.uid)!;
          const st = s.status as { installPlanRef?: { name: string; uid: string } };
          expect([st.installPlanRef?.name, st.installPlanRef?.uid]).toEqual([IP_NAME, IP_UID]);
          expect(s.metadata.deletionTimestamp).toBeUndefined();
        }
        expect(new Set(refs.map((r) => r.uid)).size).toBe(refs.length);
      }),
      { numRuns: 1000 },
    );
  });
});
