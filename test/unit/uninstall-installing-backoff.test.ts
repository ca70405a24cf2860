/**
 * Red team 21 (failed on 3059676), I1: the staged uninstall's OTHER wait still polls every 2 s forever. 8264957 backed off
 * the wait for deleting objects (OLM down for hours), but a requested uninstall whose CSV is listed
 * by an InstallPlan still phase Installing (catalog-operator down or crash-looping: nobody moves the
 * plan on) is looked at again every 2 s for as long as that lasts:
 * functions/finalizer-cleanup/plan.ts `if (blocking.length) return { kind: 'requeue', afterSeconds: 2, ... }`.
 * Each look is the whole uninstall observation (Operator, every Subscription cluster-wide, every
 * component, the namespace's InstallPlans). The plan has been Installing for two hours here
 * (status.startTime, set by catalog-operator when it started executing it).
 */
import { describe, expect, it } from 'vitest';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import { defaults } from '../../functions/finalizer-cleanup/plan.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';
import { componentLabels, csv, installPlan, installPlanStatus, operatorObject, rfc3339 } from '../fixtures/olm-objects.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const NS = 'operators';
const PKG = 'etcd';
const CSV = 'etcdoperator.v0.9.4';

function reader(objs: KubeObject[]): Reader {
  const same = (o: KubeObject, r: Ref) => o.apiVersion === r.apiVersion && o.kind === r.kind && o.metadata.name === r.name && (o.metadata.namespace ?? '') === (r.namespace ?? '');
  return {
    async get<T extends KubeObject>(r: Ref) {
      return structuredClone(objs.find((o) => same(o, r))) as T | undefined;
    },
    async *list<T extends KubeObject>(apiVersion: string, kind: string, opts: ListOptions = {}) {
      for (const o of objs) if (o.apiVersion === apiVersion && o.kind === kind && (!opts.namespace || o.metadata.namespace === opts.namespace)) yield structuredClone(o) as T;
    },
  };
}

let seq = 0;
const live = (o: unknown, extra: Record<string, unknown> = {}): KubeObject => {
  const x = o as KubeObject;
  seq++;
  return { ...x, metadata: { uid: `uid-${seq}`, resourceVersion: String(100 + seq), creationTimestamp: rfc3339(new Date(NOW.getTime() - 86_400_000)), ...x.metadata, ...extra } } as KubeObject;
};

describe('redteam21 I1: an uninstall blocked by an InstallPlan stuck Installing backs off', () => {
  it('catalog-operator down for 2 h with the plan Installing: not re-checked every 2 s', async () => {
    const c = live(csv({ namespace: NS, name: CSV, labels: componentLabels(PKG, NS) }));
    const op = live(operatorObject({ pkg: PKG, namespace: NS, refs: [{ apiVersion: c.apiVersion, kind: c.kind, namespace: NS, name: CSV }] }), { annotations: { 'olm-medic.io/uninstall': 'true' } });
    const ip = live({ ...installPlan({ namespace: NS, name: 'install-abcde', csvNames: [CSV] }), status: installPlanStatus({ phase: 'Installing', catalogSources: ['operatorhubio-catalog'], startTime: new Date(NOW.getTime() - 7_200_000) }) }, { creationTimestamp: rfc3339(new Date(NOW.getTime() - 7_200_000)) });
    const ctx = { now: NOW, clock: () => NOW, options: { ...defaults }, policy: { dryRun: false, protectedNamespaces: new Set<string>() } };
    const o = await finalizerCleanup.observe({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: op.metadata.name }, reader([op, c, ip]), ctx);
    const p = finalizerCleanup.plan(o!, ctx);
    expect(p.kind).toBe('requeue');
    // (Control: the wait is this plan's — it names the InstallPlan.)
    expect(p.kind === 'requeue' && p.reason).toContain('install-abcde');
    // The deleting-objects wait of the same uninstall backs off to 60 s after 4 minutes; this one stays at 2 s.
    expect(p.kind === 'requeue' ? p.afterSeconds : 0).toBeGreaterThanOrEqual(30);
  });
});
