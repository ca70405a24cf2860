/**
 * Red team 19 (failed on 0fe76ca): finalizer-cleanup's staged uninstall when one leftover is opted out
 * (olm-medic.io/ignore=true), since f60e23f made the executor keep a plan's re-check when policy
 * refuses every optional action.
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { defaults, plan, type Component, type OperatorObserved } from '../../functions/finalizer-cleanup/plan.js';
import { NO_POLICY, type AnyFunction, type Plan, type PlanContext } from '../../shared/core/types.js';
import { createExecutor } from '../../shared/core/executor.js';
import { createEngine } from '../../shared/core/engine.js';
import { ActionBudget, type Policy } from '../../shared/core/policy.js';
import type { EventRecord, Recorder } from '../../shared/core/recorder.js';
import type { KubeObject, Ref, Writer } from '../../shared/kube/types.js';
import { componentLabels, csv, operatorObject, rfc3339 } from '../fixtures/olm-objects.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const ago = (s: number) => new Date(NOW.getTime() - s * 1000);
const NS = 'operators';
const PKG = 'etcd';
const KEY = `operators.coreos.com/${PKG}.${NS}`;
const labels = componentLabels(PKG, NS);
const IGNORE = { 'olm-medic.io/ignore': 'true' };
const ctx: PlanContext = { now: NOW, options: { ...defaults }, policy: NO_POLICY };

let seq = 0;
function live(o: { apiVersion: string; kind: string; metadata: Record<string, unknown> } & Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject {
  seq++;
  return { ...o, metadata: { uid: `uid-${seq}`, resourceVersion: String(100 + seq), creationTimestamp: rfc3339(ago(86_400)), ...o.metadata, ...extra } } as unknown as KubeObject;
}
const comp = (x: KubeObject): Component => ({ ref: { apiVersion: x.apiVersion, kind: x.kind, name: x.metadata.name, ...(x.metadata.namespace ? { namespace: x.metadata.namespace } : {}) }, live: x });
function operator(): KubeObject {
  const b = operatorObject({ pkg: PKG, namespace: NS, refs: [] });
  b.metadata.annotations = { 'olm-medic.io/uninstall': 'true' };
  return live(b as never);
}
const theCsv = (annotations?: Record<string, string>) => {
  const c = live(csv({ namespace: NS, name: 'etcdoperator.v0.9.4', phase: 'Failed', at: ago(7200), labels }) as never);
  if (annotations) c.metadata.annotations = { ...c.metadata.annotations, ...annotations };
  return c;
};
const installPlan = (annotations?: Record<string, string>, phase = 'Complete') =>
  live({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', metadata: { name: 'install-abcde', namespace: NS, labels, ...(annotations ? { annotations } : {}) }, status: { phase } });
const deployment = () => live({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'etcd-operator', namespace: NS, labels } });

function observed(components: KubeObject[], csvs: KubeObject[]): OperatorObserved {
  return { kind: 'operator', operator: operator(), labelKey: KEY, claimants: [], csvs, components: components.map(comp) };
}

/** The real executor over an in-memory cluster (deletes remove objects). */
function harness() {
  const events: EventRecord[] = [];
  const deleted: string[] = [];
  const writer: Writer = {
    async delete(ref: Ref) {
      deleted.push(`${ref.kind}/${ref.name}`);
      return 'deleted';
    },
    async mergePatch() {
      throw new Error('no patch expected');
    },
    async create(o) {
      return o;
    },
  } as Writer;
  const recorder: Recorder = { record: async (e) => void events.push(e) };
  const policy: Policy = { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 100, windowSeconds: 60 };
  const execute = createExecutor({ writer, recorder, policy, budget: new ActionBudget(100, 60_000, () => NOW.getTime()) });
  return { execute, events, deleted };
}

describe('redteam19 finalizer-cleanup: an opted-out leftover in a staged uninstall', () => {
  it('U-A an opted-out, Complete InstallPlan is kept (Warning) and the uninstall goes on to the CSV, not held at the InstallPlan stage forever', async () => {
    // Everything else of the operator is as an uninstall request finds it: a long-Failed CSV and its Deployment.
    let ip: KubeObject | undefined = installPlan(IGNORE);
    let c: KubeObject | undefined = theCsv();
    let d: KubeObject | undefined = deployment();
    const { execute, deleted, events } = harness();
    // Drive the uninstall as the engine would: look, act, apply, look again (10 rounds is plenty).
    for (let round = 0; round < 10; round++) {
      const comps = [ip, c, d].filter((x): x is KubeObject => !!x);
      const p: Plan = plan(observed(comps, c ? [c] : []), ctx);
      if (p.kind !== 'act') break;
      const r = await execute('finalizer-cleanup', p, `Operator/${PKG}.${NS}`);
      if (r.status === 'replan') break;
      if (deleted.includes('ClusterServiceVersion/etcdoperator.v0.9.4')) c = undefined;
      if (deleted.includes('Deployment/etcd-operator')) d = undefined;
    }
    expect(events.some((e) => e.reason === 'OptedOut'), 'the opted-out InstallPlan is refused with a Warning Event').toBe(true);
    // README "Nothing blocks the fix for others": "Optional actions (... each leftover) that policy
    // refuses are skipped with a Warning Event while the rest goes on".
    expect(deleted).toEqual(['ClusterServiceVersion/etcdoperator.v0.9.4', 'Deployment/etcd-operator']);
  });

  it('U-B a CSV opted out of finalizer management (olm-medic.io/ignore) and an uninstall request: one refusal, not a re-check every 2 s forever (CLI: exit 4 "in progress" after its whole --wait)', async () => {
    const o = observed([theCsv(IGNORE), deployment()], [theCsv(IGNORE)]);
    let looks = 0;
    const fn = {
      name: 'finalizer-cleanup',
      summary: 's',
      kinds: ['operators.coreos.com/v1/Operator'],
      targets: (t: { ref: unknown }) => [t.ref],
      async *sweep() {
        yield { apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: `${PKG}.${NS}` };
      },
      // Nothing changes: policy refuses the only write the plan asks for.
      observe: async () => (looks++, o),
      plan,
    } as unknown as AnyFunction;
    const { execute, events } = harness();
    const engine = createEngine({
      functions: [fn],
      options: { 'finalizer-cleanup': { ...defaults } },
      reader: {} as never,
      execute,
      now: () => NOW,
      policy: { dryRun: false, protectedNamespaces: new Set() },
      log: pino({ level: 'silent' }),
      maxReplans: 3,
      sweepConcurrency: 1,
      followUps: 3,
    });
    // As the CLI runs it: track, sweep, drain until the --wait deadline (here 5 s).
    engine.trackLooks();
    const [first] = await engine.handle({ kind: 'sweep', meta: { id: 'cli', source: 'olm-medic-cli', type: 'io.olm-medic.sweep' } });
    expect(first).toMatchObject({ status: 'refused' });
    expect(events.map((e) => e.reason)).toContain('OptedOut');
    const { pending } = await engine.drain(Date.now() + 5_000);
    engine.close();
    // The state cannot change by itself (only the user removing the annotation, an event): one look.
    expect({ looks, pending }).toEqual({ looks: 1, pending: [] });
  }, 20_000);

  it('an opted-out InstallPlan still Installing holds the CSV back (OLM would re-create it): the uninstall waits, deleting nothing', () => {
    const c = theCsv();
    const o = { ...observed([installPlan(IGNORE, 'Installing'), c, deployment()], [c]), unfinishedPlans: [{ plan: 'install-abcde', namespace: NS, csv: c.metadata.name, phase: 'Installing' }] };
    expect(plan(o, ctx)).toMatchObject({ kind: 'requeue' });
  });

  it('an opted-out CSV next to a Deployment that is not: the CSV is kept (Warning), and so is the Deployment (OLM would recreate it); no re-check', () => {
    const c = theCsv(IGNORE);
    const p = plan(observed([c, deployment()], [c]), ctx);
    expect(p.kind === 'act' && { actions: p.actions.map((a) => `${a.target.kind}/${a.target.name}`), again: p.requeueAfterSeconds ?? p.othersRecheckAfterSeconds }).toEqual({ actions: ['ClusterServiceVersion/etcdoperator.v0.9.4'], again: undefined });
  });
});
