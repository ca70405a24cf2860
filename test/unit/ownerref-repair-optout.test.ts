/**
 * Red team 18 (failed on 742adca), ownerref-repair: a Subscription annotated olm-medic.io/ignore=true whose InstallPlan
 * misses its ownerReference (olm-facts §2.1 (a), issue #3199) was refused SILENTLY. servesPlan()
 * (functions/ownerref-repair/plan.ts) treats the opted-out Subscription as "not serving", so plan()
 * answers `noop` ("no Subscription references this InstallPlan") and the executor records nothing.
 * Everywhere else an opt-out is a policy refusal with a Warning Event (executor.ts act():
 * OptedOut; catalog-reschedule plans the opted-out catalog's delete so that the executor refuses it
 * with an Event; the InstallPlan's own opt-out is an OptedOut Warning, integration test line 281).
 * Outcome vocabulary (shared/core/outcome.ts): 'refused' = "wrong but unsafe to fix, or policy
 * forbids: Warning Event"; 'noop' = "nothing wrong, or not ours". The rule: "a Kubernetes Event must
 * be recorded for every action and refusal".
 */
import { describe, expect, it } from 'vitest';
import { ownerrefRepair } from '../../functions/ownerref-repair/index.js';
import { NO_POLICY, type ObserveContext, type PlanContext } from '../../shared/core/types.js';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import type { KubeObject, ListOptions, OwnerReference, Reader, Ref, Writer } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';

const NOW = new Date('2025-06-01T12:00:00Z');
const NS = 'operators';
const IP = 'install-7gq2x';
const CSV = 'prometheusoperator.0.47.0';
const owner = (name: string): OwnerReference => ({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', name, uid: `sub-${name}`, controller: false, blockOwnerDeletion: false });

function sub(name: string, o: { ref: 'ip' | 'other'; currentCSV: string; annotations?: Record<string, string> }): KubeObject {
  const s = olm.subscription({ namespace: NS, name, package: name, source: 'operatorhubio-catalog', sourceNamespace: 'olm', ...(o.annotations ? { annotations: o.annotations } : {}) });
  s.status = olm.subscriptionStatus({ at: NOW, currentCSV: o.currentCSV, installPlan: o.ref === 'ip' ? { name: IP, namespace: NS, uid: 'ip-2' } : { name: 'install-old01', namespace: NS, uid: 'ip-1' }, state: 'UpgradePending', installPlanGeneration: 2 });
  return { ...s, metadata: { ...s.metadata, uid: `sub-${name}`, resourceVersion: '200' } } as KubeObject;
}

function installPlan(extraCsvs: string[] = []): KubeObject {
  const ip = olm.installPlan({ namespace: NS, name: IP, csvNames: [CSV, ...extraCsvs], approval: 'Automatic', approved: true, generation: 2 });
  ip.status = olm.installPlanStatus({ phase: 'Complete', catalogSources: ['operatorhubio-catalog'] });
  // #3199 / olm-facts §2.1 (a): owned by the bystander etcd only, while prometheus points at it.
  return { ...ip, metadata: { ...ip.metadata, uid: 'ip-2', resourceVersion: '300', creationTimestamp: new Date(NOW.getTime() - 3_600_000).toISOString(), ownerReferences: [owner('etcd')] } } as KubeObject;
}

function cluster(objs: KubeObject[]): Reader {
  const key = (r: { kind: string; namespace?: string; name: string }) => `${r.kind}/${r.namespace}/${r.name}`;
  const m = new Map(objs.map((o) => [key({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }), o]));
  return {
    async get<T extends KubeObject>(ref: Ref) {
      return structuredClone(m.get(key(ref))) as T | undefined;
    },
    async *list<T extends KubeObject>(_a: string, kind: string, opts: ListOptions = {}) {
      for (const o of m.values()) if (o.kind === kind && (!opts.namespace || o.metadata.namespace === opts.namespace)) yield structuredClone(o) as T;
    },
  };
}

async function run(reader: Reader, ref: Ref) {
  const pctx: PlanContext = { now: NOW, options: {}, policy: NO_POLICY };
  const octx: ObserveContext = { ...pctx, clock: () => NOW };
  const observed = await ownerrefRepair.observe(ref, reader, octx);
  const p = ownerrefRepair.plan(observed!, pctx);
  const events: EventRecord[] = [];
  const writes: string[] = [];
  const writer: Writer = {
    async delete() {
      writes.push('delete');
      return 'deleted';
    },
    async mergePatch(r) {
      writes.push(`patch ${r.kind}/${r.name}`);
      return {} as KubeObject;
    },
    async create(o) {
      return o;
    },
  };
  const execute = createExecutor({ writer, recorder: { record: async (e) => void events.push(e) }, policy: { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 100, windowSeconds: 60 }, budget: new ActionBudget(100, 60_000, () => NOW.getTime()) });
  const outcome = await execute('ownerref-repair', p, `${ref.kind}/${ref.namespace}/${ref.name}`);
  return { plan: p, outcome, events, writes };
}

describe('ownerref-repair: an opted-out Subscription\'s part of an InstallPlan is refused with a Warning Event', () => {
  const scene = () =>
    cluster([
      installPlan(),
      sub('etcd', { ref: 'other', currentCSV: 'etcdoperator.v0.9.4' }),
      sub('prometheus', { ref: 'ip', currentCSV: CSV, annotations: { 'olm-medic.io/ignore': 'true' } }),
    ]);

  it('control: without the annotation the same InstallPlan is repaired (so the finding is real)', async () => {
    const r = cluster([installPlan(), sub('etcd', { ref: 'other', currentCSV: 'etcdoperator.v0.9.4' }), sub('prometheus', { ref: 'ip', currentCSV: CSV })]);
    const { outcome, writes } = await run(r, { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', namespace: NS, name: IP });
    expect(outcome.status).toBe('acted');
    expect(writes).toEqual([`patch InstallPlan/${IP}`]);
  });

  it.each([
    ['the InstallPlan\'s event', { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', namespace: NS, name: IP }],
    ['the Subscription\'s event', { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', namespace: NS, name: 'prometheus' }],
  ])('R18a-O1 %s: no write (opt-out holds), but the refusal must be recorded as a Warning Event (OptedOut), not a silent noop', async (_what, ref) => {
    const { outcome, events, writes } = await run(scene(), ref);
    expect(writes).toEqual([]);
    expect(outcome.status, `outcome ${JSON.stringify(outcome)}`).toBe('refused');
    expect(events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'OptedOut']]);
  });

  it('one opted-out Subscription never holds back another\'s repair: the patch adds only the other\'s owner; the opted-out one gets its Warning', async () => {
    const r = cluster([
      installPlan(['grafana.v9.0.0']),
      sub('etcd', { ref: 'other', currentCSV: 'etcdoperator.v0.9.4' }),
      sub('prometheus', { ref: 'ip', currentCSV: CSV, annotations: { 'olm-medic.io/ignore': 'true' } }),
      sub('grafana', { ref: 'ip', currentCSV: 'grafana.v9.0.0' }),
    ]);
    const { plan: p, outcome, events, writes } = await run(r, { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', namespace: NS, name: IP });
    expect(writes).toEqual([`patch InstallPlan/${IP}`]);
    expect(outcome.status).toBe('acted');
    const applied = p.kind === 'act' ? p.actions.filter((a) => !a.optional) : [];
    expect(applied.map((a) => (a.verb === 'patch' ? (a.patch.metadata as { ownerReferences: { name: string }[] }).ownerReferences.map((o) => o.name) : []))).toEqual([['etcd', 'grafana']]);
    expect(events.map((e) => [e.type, e.reason, e.regarding.name])).toEqual([
      ['Warning', 'OptedOut', 'prometheus'],
      ['Normal', 'InstallPlanOwnerAdded', IP],
    ]);
  });
});
