/**
 * A write whose answer is lost, on the real apiserver (red team 33, W1). The CLI runs as the shipped
 * ServiceAccount through the fault proxy (test/support/fault-proxy.ts), which forwards the chosen
 * write to the real kube-apiserver, lets it be applied, and cuts the connection before any byte of
 * the answer. The kube client retries the write with the same preconditions; the real apiserver
 * answers the retry from the write's own effect (409: the resourceVersion moved; 404: the object is
 * gone). The run must report the write it made (exit 3, an acted row) and record its Event, noting
 * the lost answer — not take its own effect for someone else's change or "already gone".
 * (The executor's decisions for each re-read result are unit-tested in test/unit/lost-write-answer*.)
 */
import { execFile } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { missingOwner, staleUnpackJob } from '../scenarios/seeds.js';
import { startFaultProxy, type FaultProxy, type ProxiedRequest } from '../support/fault-proxy.js';
import { testCluster } from '../support/cluster.js';

const c = testCluster();

function cli(args: string[], kubeconfig: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/olm-medic.mjs', ...args], { env: { PATH: process.env.PATH ?? '', KUBECONFIG: kubeconfig } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A proxy that loses the answer to the first request `pick` chooses (applied, then the connection cut), and logs every write. */
async function losingFirst(pick: (r: ProxiedRequest) => boolean): Promise<{ proxy: FaultProxy; writes: string[] }> {
  let lost = false;
  const writes: string[] = [];
  const proxy = await startFaultProxy({
    kubeconfig: c.kubeconfig.shipped,
    dir: '/tmp',
    rnd: () => 1,
    rate: 0,
    rule: (r) => {
      if (r.method !== 'GET') writes.push(`${r.method} ${r.url.split('?')[0]}`);
      if (!lost && pick(r)) {
        lost = true;
        return 'reset-after';
      }
      return 'pass';
    },
  });
  return { proxy, writes };
}

let proxy: FaultProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

describe('a write whose answer was lost is reported and recorded, not erased by its own retry', () => {
  it('ownerref-repair: the InstallPlan PATCH lands, its answer is lost, the retry gets 409 from its own effect -> exit 3, an acted row, InstallPlanOwnerAdded noting the lost answer', async () => {
    const id = `lwa${Math.random().toString(36).slice(2, 5)}`;
    const s = await missingOwner(c.admin, id);
    const [ns] = s.namespaces;
    const p = await losingFirst((r) => r.method === 'PATCH' && r.url.includes(`/namespaces/${ns}/installplans/`));
    proxy = p.proxy;
    const r = await cli(['sweep', '--function', 'ownerref-repair', '--namespace', ns!, '--wait', '0', '-o', 'json'], p.proxy.kubeconfig);
    expect(p.proxy.log.map((l) => `${l.fault} ${l.method}`)).toEqual(['reset-after PATCH']);
    expect(await s.healed()).toBe(true);
    // The applied PATCH and its retry, which the real apiserver refused (409: the resourceVersion moved).
    expect(p.writes.filter((w) => w.startsWith('PATCH'))).toHaveLength(2);
    const report = JSON.parse(r.stdout) as { outcomes: { target?: string; status: string; actions?: { verb: string; result: string }[] }[] };
    expect({ code: r.code, rows: report.outcomes.map((o) => `${o.target} ${o.status}`) }, r.stderr).toEqual({ code: 3, rows: [expect.stringMatching(/^InstallPlan\/.+ acted$/)] });
    const events = (await c.medicEvents(ns!)).filter((e) => e.reason === 'InstallPlanOwnerAdded');
    expect(events).toHaveLength(1);
    expect(events[0]!.note).toMatch(/answer to this write was lost; a re-read shows its effect in place/);
  }, 60_000);

  it('job-conflict: the unpack Job DELETE lands, its answer is lost, the retry gets 404 from its own effect -> the Job is reported deleted (not "already gone") and the plan goes on from live state', async () => {
    const id = `lwj${Math.random().toString(36).slice(2, 5)}`;
    const s = await staleUnpackJob(c.admin, id);
    const [cat, , b] = s.namespaces;
    const p = await losingFirst((r) => r.method === 'DELETE' && r.url.includes(`/namespaces/${cat}/jobs/`));
    proxy = p.proxy;
    const r = await cli(['sweep', '--function', 'job-conflict', '--namespace', b!, '--wait', '30', '-o', 'json'], p.proxy.kubeconfig);
    expect(p.proxy.log.map((l) => `${l.fault} ${l.method}`)).toEqual(['reset-after DELETE']);
    expect(await s.healed(), r.stdout + r.stderr).toBe(true);
    expect(p.writes.filter((w) => w.startsWith('DELETE') && w.includes('/jobs/'))).toHaveLength(2);
    const report = JSON.parse(r.stdout) as { outcomes: { status: string; actions?: { verb: string; target: string; result: string }[] }[] };
    expect(r.code, r.stderr).toBe(3);
    const actions = report.outcomes.flatMap((o) => o.actions ?? []);
    expect(actions).toContainEqual(expect.objectContaining({ verb: 'delete', target: expect.stringMatching(new RegExp(`^Job/${cat}/`)), result: 'done' }));
    expect(actions).toContainEqual(expect.objectContaining({ verb: 'patch', target: `Subscription/${b}/etcd`, result: 'done' }));
    const deleted = [...(await c.medicEvents(cat!)), ...(await c.medicEvents(b!))].filter((e) => e.reason === 'UnpackJobDeleted');
    expect(deleted).toHaveLength(1);
    expect(deleted[0]!.note).toMatch(/answer to this write was lost; a re-read shows its effect in place/);
  }, 60_000);
});
