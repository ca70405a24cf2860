/**
 * The executor and engine against the real apiserver: preconditions, conflict re-plan, dry-run,
 * Events, opt-out, protected namespaces and the action budget — via a test-only function.
 */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../shared/core/outcome.js';
import { target, type Plan, type RemediationFunction } from '../../shared/core/types.js';
import { collect } from '../../shared/kube/collect.js';
import { KubeError } from '../../shared/kube/errors.js';
import type { KubeObject, Reader, Ref } from '../../shared/kube/types.js';
import { httpStatus } from '../../shared/http/app.js';
import { testCluster } from '../support/cluster.js';
import { janitor, STATE } from '../support/janitor.js';

const tc = testCluster();
// The test-only janitor patches ConfigMaps, which the shipped RBAC rightly forbids: run the core as
// the unrestricted test identity here (the functions' suites run as the shipped ServiceAccount).
const c = {
  ...tc,
  runtime: (fns: Parameters<typeof tc.runtime>[0], env: Record<string, string> = {}) => tc.runtime(fns, { KUBECONFIG: tc.kubeconfig.medic, ...env }),
  audit: (user = 'olm-medic') => tc.audit(user),
};

async function configMap(ns: string, name: string, state: string, annotations: Record<string, string> = {}): Promise<KubeObject> {
  return c.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { [STATE]: state }, annotations }, data: { a: '1' } });
}
const ref = (ns: string, name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name });
const nsRequests = (ns: string, verb?: string) => c.audit().filter((e) => e.objectRef?.namespace === ns && (!verb || e.verb === verb));

describe('executor on the real apiserver', () => {
  it('deletes with uid + resourceVersion preconditions and records a Normal Event', async () => {
    const ns = await c.namespace('exec');
    const cm = await configMap(ns, 'old', 'stale');
    const fn = janitor();
    const rt = c.runtime([fn]);
    const out = await rt.engine.reconcile(fn, ref(ns, 'old'));
    expect(out.status).toBe('acted');
    expect(await c.get(ref(ns, 'old'))).toBeUndefined();
    const events = await c.medicEvents(ns);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      reason: 'TestConfigMapDeleted',
      type: 'Normal',
      action: 'Delete',
      reportingController: 'olm-medic.io/test-janitor',
      regarding: { kind: 'ConfigMap', name: 'old', namespace: ns, uid: cm.metadata.uid },
    });
  });

  it('re-reads and re-plans when the object changed after it was observed (409), then succeeds', async () => {
    const ns = await c.namespace('exec');
    const before = await configMap(ns, 'moving', 'stale');
    await c.admin.mergePatch(ref(ns, 'moving'), { data: { a: '2' } }, { dryRun: false }); // resourceVersion moves on
    const fn = janitor({ staleSnapshots: [before] });
    const out = await c.runtime([fn]).engine.reconcile(fn, ref(ns, 'moving'));
    expect(out.status).toBe('acted');
    const deletes = nsRequests(ns, 'delete');
    expect(deletes.map((d) => d.responseStatus?.code)).toEqual([409, 200]);
    expect(await c.get(ref(ns, 'moving'))).toBeUndefined();
  });

  it('never deletes a recreated object with the same name (uid precondition)', async () => {
    const ns = await c.namespace('exec');
    const first = await configMap(ns, 'reborn', 'stale');
    await c.admin.delete(ref(ns, 'reborn'), { uid: first.metadata.uid!, dryRun: false });
    const second: KubeObject = await c.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'reborn', namespace: ns, labels: { [STATE]: 'keep' } } });
    const fn = janitor({ staleSnapshots: [first] });
    const out = await c.runtime([fn]).engine.reconcile(fn, ref(ns, 'reborn'));
    expect(out.status).toBe('noop'); // re-planned on the live object, which is not stale
    expect((await c.get(ref(ns, 'reborn')))?.metadata.uid).toBe(second.metadata.uid);
  });

  it('gives up as transient (so the Broker redelivers) when the state keeps changing', async () => {
    const ns = await c.namespace('exec');
    const snap = await configMap(ns, 'churn', 'stale');
    await c.admin.mergePatch(ref(ns, 'churn'), { data: { a: '3' } }, { dryRun: false });
    const fn = janitor({ staleSnapshots: [snap, snap, snap, snap, snap] });
    const out = await c.runtime([fn], { MAX_REPLANS: '2' }).engine.reconcile(fn, ref(ns, 'churn'));
    expect(out.status).toBe('transient');
    expect(nsRequests(ns, 'delete')).toHaveLength(3);
    expect(await c.get(ref(ns, 'churn'))).toBeDefined();
  });

  it('dry-run sends dryRun=All, leaves the object unchanged, and still records what it would have done', async () => {
    const ns = await c.namespace('exec');
    const cm = await configMap(ns, 'dry', 'stale');
    const pcm = await configMap(ns, 'dry-patch', 'patch');
    const fn = janitor();
    const rt = c.runtime([fn], { DRY_RUN: 'true' });
    expect((await rt.engine.reconcile(fn, ref(ns, 'dry'))).status).toBe('dry-run');
    expect((await rt.engine.reconcile(fn, ref(ns, 'dry-patch'))).status).toBe('dry-run');
    expect((await c.get(ref(ns, 'dry')))?.metadata.resourceVersion).toBe(cm.metadata.resourceVersion);
    expect((await c.get(ref(ns, 'dry-patch')))?.metadata.resourceVersion).toBe(pcm.metadata.resourceVersion);
    const writes = c.audit().filter((e) => e.objectRef?.namespace === ns && ['delete', 'patch'].includes(e.verb));
    expect(writes).toHaveLength(2);
    for (const w of writes) expect(w.requestURI).toContain('dryRun=All');
    const notes = (await c.medicEvents(ns)).map((e) => e.note);
    expect(notes.every((n) => n.startsWith('[dry-run] would have:'))).toBe(true);
    expect(notes).toHaveLength(2);
  });

  it('patches with a resourceVersion precondition', async () => {
    const ns = await c.namespace('exec');
    await configMap(ns, 'p', 'patch');
    const fn = janitor();
    const out = await c.runtime([fn]).engine.reconcile(fn, ref(ns, 'p'));
    expect(out.status).toBe('acted');
    expect((await c.get(ref(ns, 'p')))?.metadata.annotations?.['test.olm-medic.io/done']).toBe('true');
    expect((await c.medicEvents(ns)).map((e) => e.reason)).toEqual(['TestPatched']);
  });

  it('refuses objects that opted out, with a Warning Event, and writes nothing', async () => {
    const ns = await c.namespace('exec');
    await configMap(ns, 'mine', 'stale', { 'olm-medic.io/ignore': 'true' });
    const fn = janitor();
    const out = await c.runtime([fn]).engine.reconcile(fn, ref(ns, 'mine'));
    expect(out.status).toBe('refused');
    expect(await c.get(ref(ns, 'mine'))).toBeDefined();
    expect(nsRequests(ns, 'delete')).toHaveLength(0);
    expect((await c.medicEvents(ns)).map((e) => [e.reason, e.type, e.action])).toEqual([['OptedOut', 'Warning', 'Refuse']]);
  });

  it('refuses protected namespaces, with a Warning Event', async () => {
    const ns = await c.namespace('prot');
    await configMap(ns, 'sys', 'stale');
    const fn = janitor();
    const out = await c.runtime([fn], { PROTECTED_NAMESPACES: `kube-system,${ns}` }).engine.reconcile(fn, ref(ns, 'sys'));
    expect(out.status).toBe('refused');
    expect(await c.get(ref(ns, 'sys'))).toBeDefined();
    expect((await c.medicEvents(ns)).map((e) => e.reason)).toEqual(['ProtectedNamespace']);
  });

  it('records one Event for a refusal repeated on the same object state', async () => {
    const ns = await c.namespace('exec');
    await configMap(ns, 'r', 'refuse');
    const fn = janitor();
    const rt = c.runtime([fn]);
    for (let i = 0; i < 3; i++) expect((await rt.engine.reconcile(fn, ref(ns, 'r'))).status).toBe('refused');
    expect((await c.medicEvents(ns)).map((e) => [e.reason, e.type])).toEqual([['TestRefused', 'Warning']]);
  });

  it('stops at the action budget and answers rate-limited', async () => {
    const ns = await c.namespace('exec');
    await configMap(ns, 'a', 'stale');
    await configMap(ns, 'b', 'stale');
    const fn = janitor();
    const rt = c.runtime([fn], { MAX_ACTIONS_PER_WINDOW: '1', ACTION_WINDOW_SECONDS: '3600' });
    expect((await rt.engine.reconcile(fn, ref(ns, 'a'))).status).toBe('acted');
    const second = await rt.engine.reconcile(fn, ref(ns, 'b'));
    expect(second.status).toBe('rate-limited');
    expect(await c.get(ref(ns, 'b'))).toBeDefined();
    expect((await c.medicEvents(ns)).map((e) => e.reason).sort()).toEqual(['RateLimited', 'TestConfigMapDeleted']);
    rt.engine.close();
  });

  it('sweeps with paginated lists and reconciles every match', async () => {
    const ns = await c.namespace('sweep');
    for (let i = 0; i < 7; i++) await configMap(ns, `s${i}`, 'stale');
    const fn = janitor();
    const outcomes = await c.runtime([fn]).engine.handle({ kind: 'sweep', namespace: ns, meta: { id: '1', source: 'test', type: 'io.olm-medic.sweep' } });
    expect(outcomes.filter((o) => o.status === 'acted')).toHaveLength(7);
  });
});

/**
 * A test-only function that deletes a batch: its target ConfigMap `batch` stands for the batch, and
 * one plan deletes every ConfigMap labelled test.olm-medic.io/batch in the namespace, in name order,
 * Terminating or not (as catalog-reschedule re-deletes a Terminating pod). `vanish[i]` names the
 * ConfigMaps deleted (as GC or another replica would) right after the i-th look; `failLook` makes
 * that look fail as an overloaded apiserver does.
 */
const BATCH = 'test.olm-medic.io/batch';
function batchJanitor(ns: string, o: { vanish?: string[][]; failLook?: number } = {}): RemediationFunction<KubeObject[]> & { looks(): number } {
  let looks = 0;
  return {
    looks: () => looks,
    name: 'test-batch',
    kinds: ['v1/ConfigMap'],
    summary: 'test-only: deletes a batch of labelled ConfigMaps in one plan',
    targets: () => [],
    async *sweep() {},
    async observe(r: Ref, read: Reader) {
      const look = looks++;
      if (look === o.failLook) throw new KubeError(503, 'ServiceUnavailable', 'apiserver overloaded');
      const items = (await collect(read.list('v1', 'ConfigMap', { namespace: ns, labelSelector: BATCH }))).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      for (const name of o.vanish?.[look] ?? []) {
        const cm = items.find((x) => x.metadata.name === name);
        if (cm) await c.admin.delete(ref(ns, name), { uid: cm.metadata.uid!, dryRun: false });
      }
      return (await read.get(r)) ? items : undefined;
    },
    plan(items: KubeObject[]): Plan {
      if (!items.length) return { kind: 'noop', reason: 'nothing labelled' };
      return { kind: 'act', summary: `delete ${items.length}`, actions: items.map((cm) => ({ verb: 'delete', target: target(cm), propagationPolicy: 'Background', reason: 'TestBatchDeleted', note: `ConfigMap ${cm.metadata.name} is in the batch` })) };
    },
  };
}

async function batch(ns: string, names: string[], finalizers: Record<string, string[]> = {}): Promise<void> {
  await c.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'batch', namespace: ns } });
  for (const name of names) await c.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { [BATCH]: 'yes' }, ...(finalizers[name] ? { finalizers: finalizers[name] } : {}) } });
}
const doneTargets = (o: Outcome, ns: string) => (o.actions ?? []).map((a) => `${a.target.replace(`ConfigMap/${ns}/`, '')} ${a.result}`);

describe('engine: a write that finds its target already gone (GC, OLM or another replica got there first)', () => {
  it('MAX_REPLANS=0: the writes already made stay in the outcome (acted, answered 200) and the target is looked at again, not failed to the Broker', async () => {
    const ns = await c.namespace('gone');
    await batch(ns, ['a', 'b']);
    const fn = batchJanitor(ns, { vanish: [['b']] });
    const rt = c.runtime([fn], { MAX_REPLANS: '0' });
    const out = await rt.engine.reconcile(fn, ref(ns, 'batch'));
    expect(out.status).toBe('acted');
    expect(httpStatus([out])).toBe(200);
    expect(out.reason).toContain('went away');
    // The look again came at once (the engine's immediate follow-up) and found nothing left.
    expect(fn.looks()).toBe(2);
    expect(doneTargets(out, ns)).toEqual(['a done']);
    expect(nsRequests(ns, 'delete').map((e) => `${e.objectRef?.name} ${e.responseStatus?.code}`)).toEqual(['a 200', 'b 404']);
    rt.engine.close();
  });

  it('objects vanishing on every attempt: after MAX_REPLANS the outcome keeps all four deletes made and looks again (acted, not a 503)', async () => {
    const ns = await c.namespace('gone');
    await batch(ns, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
    const fn = batchJanitor(ns, { vanish: [['b'], ['d'], ['f'], ['h']] });
    const rt = c.runtime([fn]);
    const out = await rt.engine.reconcile(fn, ref(ns, 'batch'));
    expect(out.status).toBe('acted');
    expect(out.reason).toContain('went away');
    expect(fn.looks()).toBe(5); // 4 attempts, then the follow-up look that finds nothing left
    expect(doneTargets(out, ns)).toEqual(['a done', 'c done', 'e done', 'g done']);
    const events = (await c.medicEvents(ns)).map((e) => e.regarding.name).sort();
    expect(events).toEqual(['a', 'c', 'e', 'g']);
    rt.engine.close();
  });

  it('the look after a gone target fails (apiserver overloaded): transient for the Broker, and the write already made is still in the outcome', async () => {
    const ns = await c.namespace('gone');
    await batch(ns, ['a', 'b']);
    const fn = batchJanitor(ns, { vanish: [['b']], failLook: 1 });
    const out = await c.runtime([fn]).engine.reconcile(fn, ref(ns, 'batch'));
    expect(out.status).toBe('transient');
    expect(doneTargets(out, ns)).toEqual(['a done']);
  });

  it('dry-run: the re-plan simulates the remaining writes again, and the outcome lists each once', async () => {
    const ns = await c.namespace('gone');
    await batch(ns, ['a', 'b', 'c']);
    const fn = batchJanitor(ns, { vanish: [['b']] });
    const out = await c.runtime([fn], { DRY_RUN: 'true' }).engine.reconcile(fn, ref(ns, 'batch'));
    expect(out.status).toBe('dry-run');
    expect(doneTargets(out, ns)).toEqual(['a dry-run', 'c dry-run']);
    expect(await c.get(ref(ns, 'a'))).toBeDefined();
    expect(await c.get(ref(ns, 'c'))).toBeDefined();
  });

  it('an object held by a finalizer and deleted again by the re-plan is listed once (one held re-check)', async () => {
    const ns = await c.namespace('gone');
    await batch(ns, ['a', 'b'], { a: ['test.olm-medic.io/hold'] });
    const fn = batchJanitor(ns, { vanish: [['b']] });
    const out = await c.runtime([fn]).engine.reconcile(fn, ref(ns, 'batch'));
    expect(out.status).toBe('acted');
    expect(doneTargets(out, ns)).toEqual(['a done']);
    expect(out.actions?.[0]?.held).toMatchObject({ kind: 'ConfigMap', name: 'a', namespace: ns });
    await c.admin.mergePatch(ref(ns, 'a'), { metadata: { finalizers: null } }, { dryRun: false });
  });
});
