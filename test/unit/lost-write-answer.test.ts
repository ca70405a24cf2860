/**
 * Red team 33, W1 (fixed: shared/kube/client.ts WriteOutcomeUnknown, shared/core/executor.ts landed()): a write whose answer is lost is RETRIED by the kube client as if it were a read,
 * and the retry's answer erases the write from the outcome, the Events and the CLI's exit code.
 *
 * shared/kube/client.ts `request()` retries every call whose error is transient (status 0: network
 * error, timeout, connection reset; 408; 429; 5xx) — PATCH and DELETE included. A PATCH the
 * apiserver APPLIED whose answer never arrived (timeout under load, a reset connection, a proxy's
 * 502/504, etcd's "request timed out" that still committed) is sent again with the same
 * resourceVersion precondition; the object's resourceVersion has moved on (our own write moved it),
 * so the retry gets 409 Conflict. The executor (shared/core/executor.ts, `e.conflict`) takes that as
 * "someone else changed it": replan, with `done` EMPTY — its own write is forgotten; the re-plan sees
 * the repaired plan and answers noop. Same for DELETE: the retry gets 404 NotFound, which counts as
 * "already gone" (replan, cause gone) and the outcome is 'gone'.
 *
 * Impact, shown here with `olm-medic sweep --function ownerref-repair` against a fake apiserver that
 * applies the PATCH and drops the connection before answering: the InstallPlan IS patched (an
 * ownerReference added), but no InstallPlanOwnerAdded Event is recorded (README: an Event "for every
 * action"), the run reports no write and exits 0 ("clean") instead of 3 ("acted"). A job-conflict Job
 * delete or a catalog pod force-delete lost the same way is reported as "target no longer exists".
 * SAFE: a write whose answer is unknown is not reported as not made: either it is not retried blindly
 * (the re-read decides, and a write that landed is reported with its Event), or the retry's 409/404
 * is not taken as someone else's change.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import type { Action, Plan } from '../../shared/core/types.js';
import { KubeError, WriteOutcomeUnknown } from '../../shared/kube/errors.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { runCliCaptured, unreachableCluster } from '../support/cli.js';
import { recordingExecutor } from '../support/scripted-apiserver.js';

const V1A = 'operators.coreos.com/v1alpha1';
const NS = 'team-a';
const IP_PATH = `/apis/operators.coreos.com/v1alpha1/namespaces/${NS}/installplans/install-abcde`;

function fakeApiserver() {
  let rv = 10;
  const sub = {
    apiVersion: V1A,
    kind: 'Subscription',
    metadata: { name: 'sub', namespace: NS, uid: 'sub-uid', resourceVersion: '5' },
    spec: { name: 'pkg' },
    status: { currentCSV: 'pkg.v1', installPlanRef: { apiVersion: V1A, kind: 'InstallPlan', name: 'install-abcde', namespace: NS, uid: 'ip-uid' } },
  };
  const ip: { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec: unknown } = {
    apiVersion: V1A,
    kind: 'InstallPlan',
    metadata: { name: 'install-abcde', namespace: NS, uid: 'ip-uid', resourceVersion: String(rv), creationTimestamp: '2025-01-01T00:00:00Z', labels: { [`operators.coreos.com/pkg.${NS}`]: '' } },
    spec: { clusterServiceVersionNames: ['pkg.v1'] },
  };
  const log: string[] = [];
  const events: string[] = [];
  let patches = 0;
  const send = (res: ServerResponse, code: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), date: new Date().toUTCString() });
    res.end(text);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      log.push(`${req.method} ${path}`);
      if (req.method === 'GET' && path.endsWith('/subscriptions')) return send(res, 200, { kind: 'SubscriptionList', apiVersion: V1A, metadata: { resourceVersion: '20' }, items: [sub] });
      if (req.method === 'GET' && path.endsWith('/installplans')) return send(res, 200, { kind: 'InstallPlanList', apiVersion: V1A, metadata: { resourceVersion: '20' }, items: [ip] });
      if (req.method === 'GET' && path === IP_PATH) return send(res, 200, ip);
      if (req.method === 'PATCH' && path === IP_PATH) {
        patches++;
        const patch = JSON.parse(body) as { metadata: { resourceVersion?: string; ownerReferences?: unknown[]; labels?: Record<string, string> } };
        if (patch.metadata.resourceVersion !== ip.metadata.resourceVersion) {
          return send(res, 409, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409, message: 'Operation cannot be fulfilled on installplans.operators.coreos.com "install-abcde": the object has been modified; please apply your changes to the latest version and try again', details: { name: 'install-abcde', group: 'operators.coreos.com', kind: 'installplans' } });
        }
        // Applied...
        if (patch.metadata.ownerReferences) ip.metadata.ownerReferences = patch.metadata.ownerReferences;
        ip.metadata.resourceVersion = String(++rv);
        // ...but the answer is lost (timeout under load, reset connection): the socket just closes.
        if (patches === 1) return void req.socket.destroy();
        return send(res, 200, ip);
      }
      if (req.method === 'POST' && path.endsWith('/events')) {
        events.push((JSON.parse(body) as { reason: string }).reason);
        return send(res, 201, JSON.parse(body));
      }
      send(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `not found: ${path}` });
    });
  });
  return { server, ip, log, events };
}

describe('a write whose answer was lost (red team 33 W1): the retry does not erase it', () => {
  it('sweep --function ownerref-repair: the InstallPlan is patched; the run must say so (exit 3, an acted row, an InstallPlanOwnerAdded Event)', async () => {
    const api = fakeApiserver();
    await new Promise<void>((r) => api.server.listen(0, '127.0.0.1', r));
    const { port } = api.server.address() as { port: number };
    const { dir } = unreachableCluster('olm-medic-rt33-retry-');
    const kubeconfig = join(dir, 'kubeconfig-local');
    writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`);
    try {
      const r = await runCliCaptured(['sweep', '--function', 'ownerref-repair', '--wait', '0', '-o', 'json'], allFunctions, { KUBECONFIG: kubeconfig });
      const rep = JSON.parse(r.out) as { outcomes: { target?: string; status: string; actions?: unknown[] }[] };
      // The write happened: the plan now carries the Subscription's ownerReference.
      expect(api.ip.metadata.ownerReferences).toEqual([{ apiVersion: V1A, kind: 'Subscription', name: 'sub', uid: 'sub-uid', controller: false, blockOwnerDeletion: false }]);
      expect(api.log.filter((l) => l.startsWith('PATCH'))).toHaveLength(2); // the applied one, and its blind retry (409)
      // SHOULD: reported and recorded. Current code: exit 0, rows [], events [].
      expect({ code: r.code, rows: rep.outcomes.map((o) => `${o.target} ${o.status}`), events: api.events }).toEqual({
        code: 3,
        rows: ['InstallPlan/team-a/install-abcde acted'],
        events: ['InstallPlanOwnerAdded'],
      });
    } finally {
      api.server.closeAllConnections();
      await new Promise<void>((r) => api.server.close(() => r()));
    }
  }, 30_000);
});

/** The executor alone, with a writer whose write's answer was lost (and a reader of the live state). */
function lostAnswer(o: { verb: 'delete' | 'patch'; retry: 404 | 409; live: KubeObject | undefined }) {
  const refusal = o.retry === 404 ? new KubeError(404, 'NotFound', 'not found') : new KubeError(409, 'Conflict', 'the object has been modified');
  const { execute, events } = recordingExecutor({
    delete: async () => Promise.reject(new WriteOutcomeUnknown(refusal)),
    mergePatch: async () => Promise.reject(new WriteOutcomeUnknown(refusal)),
    create: async (x) => x,
    get: (async () => o.live) as never,
  });
  const target = { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' };
  const action: Action =
    o.verb === 'delete'
      ? { verb: 'delete', target, reason: 'UnpackJobDeleted', note: 'Deleted Job abc.' }
      : { verb: 'patch', target, patch: { metadata: { annotations: { 'olm-medic.io/nudged-at': 'T' } } }, reason: 'Nudged', note: 'Nudged abc.' };
  const plan: Plan = { kind: 'act', actions: [action], summary: 'fix abc' };
  return { run: () => execute('job-conflict', plan, 'Job/olm/abc'), events };
}
const job = (extra: Partial<KubeObject['metadata']> = {}, annotations?: Record<string, string>): KubeObject =>
  ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'abc', namespace: 'olm', uid: 'job-1', resourceVersion: '8', ...(annotations ? { annotations } : {}), ...extra } }) as KubeObject;

describe('the executor decides a write whose answer was lost by a re-read', () => {
  it('a DELETE whose retry found the Job gone: reported done, with its Event noting the lost answer (not "already gone"), then re-planned from live state', async () => {
    const t = lostAnswer({ verb: 'delete', retry: 404, live: undefined });
    const out = await t.run();
    expect(out).toMatchObject({ status: 'replan', cause: 'lost-answer', done: [{ verb: 'delete', result: 'done' }] });
    expect(t.events.map((e) => e.reason)).toEqual(['UnpackJobDeleted']);
    expect(t.events[0]!.note).toMatch(/answer to this write was lost; a re-read shows its effect in place/);
  });

  it('a DELETE whose retry found a NEW object of that name: ours is gone: reported done, re-planned', async () => {
    expect(await lostAnswer({ verb: 'delete', retry: 404, live: job({ uid: 'job-2' }) }).run()).toMatchObject({ status: 'replan', done: [{ verb: 'delete', result: 'done' }] });
  });

  it('a PATCH whose retry got 409 and whose content is in place: reported done, re-planned', async () => {
    const t = lostAnswer({ verb: 'patch', retry: 409, live: job({}, { 'olm-medic.io/nudged-at': 'T' }) });
    expect(await t.run()).toMatchObject({ status: 'replan', done: [{ verb: 'patch', result: 'done' }] });
    expect(t.events.map((e) => e.reason)).toEqual(['Nudged']);
  });

  it("twin: a PATCH whose retry got 409 and whose content is NOT in place: someone else's change, re-planned, no Event", async () => {
    const t = lostAnswer({ verb: 'patch', retry: 409, live: job({}, { 'olm-medic.io/nudged-at': 'OTHER' }) });
    expect(await t.run()).toMatchObject({ status: 'replan', cause: 'conflict' });
    expect(t.events).toEqual([]);
  });

  it('twin: a PATCH whose retry found the object gone: re-planned as gone', async () => {
    expect(await lostAnswer({ verb: 'patch', retry: 404, live: undefined }).run()).toMatchObject({ status: 'replan', cause: 'gone' });
  });
});

describe('MAX_REPLANS=0: a write confirmed by a re-read is not turned into a 503', () => {
  it('the engine reports the write (acted, looking again in process), not a transient failure for the Broker to redeliver', async () => {
    const { createRuntime } = await import('../../shared/wiring.js');
    const { loadConfig } = await import('../../shared/core/config.js');
    const pino = (await import('pino')).default;
    let observed = 0;
    const fn = {
      name: 'job-conflict',
      summary: 's',
      kinds: ['batch/v1/Job'],
      targets: () => [{ apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc' }],
      // The Job is looked at once: after the delete (made, its answer lost) it is gone.
      observe: async () => (observed++ === 0 ? {} : undefined),
      plan: (): Plan => ({ kind: 'act', actions: [{ verb: 'delete', target: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' }, reason: 'UnpackJobDeleted', note: 'Deleted Job abc.' }], summary: 'fix abc' }),
    };
    const kube = {
      get: async () => undefined,
      list: () => (async function* () {})(),
      delete: async () => Promise.reject(new WriteOutcomeUnknown(new KubeError(404, 'NotFound', 'not found'))),
      mergePatch: async () => Promise.reject(new Error('no patch')),
      create: async (x: KubeObject) => x,
      serverNow: () => new Date(),
    };
    const fns = [fn] as never[];
    const rt = createRuntime(loadConfig({ MAX_REPLANS: '0' }, fns), fns, { kube: kube as never, log: pino({ level: 'silent' }) });
    try {
      const out = await rt.engine.reconcile(fn as never, { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc' });
      expect(out).toMatchObject({ status: 'acted', actions: [{ verb: 'delete', result: 'done' }] });
    } finally {
      rt.engine.close();
    }
  });
});
