/**
 * The executor and engine against the real apiserver: preconditions, conflict re-plan, dry-run,
 * Events, opt-out, protected namespaces and the action budget — via a test-only function.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
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
