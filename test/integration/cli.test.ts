/**
 * The CLI (`olm-medic sweep|replay`, for clusters not on Knative) against the real control plane,
 * as the shipped ServiceAccount: findings table/JSON, dry-run, and exit codes clean/acted/failed/usage.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toJsonl } from '../../shared/events/jsonl.js';
import { missingOwner, staleUnpackJob, uninstallLeftovers } from '../scenarios/seeds.js';
import * as olm from '../fixtures/olm-objects.js';
import { refOf, type KubeObject } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import { testCluster } from '../support/cluster.js';
import { loadStream } from '../support/streams.js';

const c = testCluster();

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/olm-medic.mjs', ...args], { env: { PATH: process.env.PATH ?? '', KUBECONFIG: c.kubeconfig.shipped, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('olm-medic CLI', () => {
  it('sweep --dry-run reports the finding (exit 3) and changes nothing; a real sweep heals; then it is clean (exit 0)', async () => {
    const id = `cli${Math.random().toString(36).slice(2, 5)}`;
    const s = await missingOwner(c.admin, id);
    const [ns] = s.namespaces;
    const dry = await cli(['sweep', '--dry-run', '--namespace', ns!, '-o', 'json']);
    expect(dry.code, dry.stderr).toBe(3);
    const report = JSON.parse(dry.stdout) as { dryRun: boolean; outcomes: { function: string; status: string }[] };
    expect(report.dryRun).toBe(true);
    expect(report.outcomes).toEqual([expect.objectContaining({ function: 'ownerref-repair', status: 'dry-run' })]);
    expect(await s.healed()).toBe(false);

    const real = await cli(['sweep', '--namespace', ns!]);
    expect(real.code, real.stderr).toBe(3);
    expect(real.stdout).toMatch(/ownerref-repair\s+InstallPlan\/.*\s+acted\s+patch InstallPlan/);
    expect(await s.healed()).toBe(true);

    const again = await cli(['sweep', '--namespace', ns!]);
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toMatch(/^clean: \d+ checked, 0 finding\(s\)/);
  });

  it('sweep --function limits the functions that run', async () => {
    const id = `cli${Math.random().toString(36).slice(2, 5)}`;
    const s = await missingOwner(c.admin, id);
    const res = await cli(['sweep', '--function', 'job-conflict', '--namespace', s.namespaces[0]!]);
    expect(res.code).toBe(0);
    expect(await s.healed()).toBe(false);
  });

  // Red team 18 (failed on 742adca): --function was turned into ENABLED_FUNCTIONS, so every function
  // left out counted as disabled and finalizer-cleanup's release-only variant ran, its release
  // exempt from dry-run: a dry-run look at job-conflict stripped olm-medic's finalizer from the CSVs
  // a running server had marked, and the table said "dry-run: nothing was changed".
  it("sweep --function X runs X alone (no left-out function's release-only variant), and --dry-run writes nothing, not even the release of olm-medic's own finalizer", async () => {
    const ns = await c.namespace('clf');
    const marked = await c.admin.create(olm.csv({ namespace: ns, name: 'etcdoperator.v0.9.4', finalizers: [MEDIC.finalizer] }) as KubeObject, { dryRun: false });
    const finalizers = async () => (await c.admin.get(refOf(marked)))?.metadata.finalizers;
    for (const dry of [['--dry-run'], []]) {
      const r = await cli(['sweep', ...dry, '--function', 'job-conflict', '--namespace', ns, '-o', 'json']);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect((JSON.parse(r.stdout) as { outcomes: unknown[] }).outcomes).toEqual([]);
      expect(await finalizers()).toEqual([MEDIC.finalizer]);
    }
    // A deployment with finalizer-cleanup disabled runs the release-only variant (the server releases
    // even in dry-run, so a CSV it marked is not stuck): the CLI's dry-run only reports it.
    const dry = await cli(['sweep', '--dry-run', '--namespace', ns, '-o', 'json'], { ENABLED_FUNCTIONS: 'job-conflict' });
    expect(dry.code, dry.stderr + dry.stdout).toBe(3);
    expect((JSON.parse(dry.stdout) as { outcomes: unknown[] }).outcomes).toEqual([expect.objectContaining({ function: 'finalizer-cleanup', status: 'dry-run' })]);
    expect(await finalizers()).toEqual([MEDIC.finalizer]);
    const real = await cli(['sweep', '--namespace', ns, '-o', 'json'], { ENABLED_FUNCTIONS: 'job-conflict' });
    expect(real.code, real.stderr + real.stdout).toBe(3);
    expect(await finalizers()).toBeUndefined();
  });

  it('replay FILE.jsonl heals from a recorded stream (exit 3)', async () => {
    const id = `clr${Math.random().toString(36).slice(2, 5)}`;
    const s = await staleUnpackJob(c.admin, id);
    const file = join(tmpdir(), `olm-medic-${id}.jsonl`);
    writeFileSync(file, toJsonl(loadStream('stale-unpack-job.jsonl', id)));
    const res = await cli(['replay', file]);
    expect(res.code, res.stderr + res.stdout).toBe(3);
    expect(res.stdout).toContain('delete Job/');
    expect(await s.healed()).toBe(true);
  });

  it('replay goes on past lines that are not valid events (a dead-letters file): each is named on stderr and in the JSON, the rest heals, exit 1', async () => {
    const id = `clb${Math.random().toString(36).slice(2, 5)}`;
    const s = await staleUnpackJob(c.admin, id);
    const file = join(tmpdir(), `olm-medic-${id}.jsonl`);
    const badData = { specversion: '1.0', id: `${id}-bad`, source: 'https://10.96.0.1:443', type: 'dev.knative.apiserver.resource.update', datacontenttype: 'application/json', data: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'a/b', namespace: s.namespaces[0] } } };
    writeFileSync(file, ['{oops', '{"a":1}', JSON.stringify(badData), toJsonl(loadStream('stale-unpack-job.jsonl', id))].join('\n'));
    const res = await cli(['replay', file, '-o', 'json']);
    expect(res.code, res.stderr + res.stdout).toBe(1);
    const report = JSON.parse(res.stdout) as { rejected: { at: string; error: string }[]; outcomes: { function: string; status: string }[] };
    expect(report.rejected).toEqual([
      { at: `${file}:1`, error: expect.stringMatching(/^invalid CloudEvent: structured body is not valid JSON/) },
      { at: `${file}:2`, error: expect.stringMatching(/^invalid CloudEvent: missing required attributes/) },
      { at: `${file}:3`, error: expect.stringContaining('data.metadata.name "a/b" must be a DNS-1123 subdomain') },
    ]);
    expect(res.stderr).toContain(`rejected ${file}:3: `);
    // The events after the bad lines were handled: the situation healed.
    expect(report.outcomes).toContainEqual(expect.objectContaining({ function: 'job-conflict', status: 'acted' }));
    expect(await s.healed()).toBe(true);
  });

  it('a sweep finishes what it starts: uninstall leftovers are gone when it returns (exit 3, healed); a target still waiting when --wait runs out is reported in progress (exit 4)', async () => {
    const id = `clw${Math.random().toString(36).slice(2, 5)}`;
    const s = await uninstallLeftovers(c.admin, id);
    const done = await cli(['sweep', '--function', 'finalizer-cleanup', '--namespace', s.namespaces[0]!, '-o', 'json']);
    expect(done.code, done.stderr + done.stdout).toBe(3);
    expect((JSON.parse(done.stdout) as { inProgress: string[] }).inProgress).toEqual([]);
    expect(await s.healed()).toBe(true);

    // An InstallPlan owned by its Subscription but missing the component label, created just now:
    // ownerref-repair waits out OLM's adoption grace (120 s) before labelling it.
    const ns = await c.namespace('clw');
    const sub = await c.admin.create(olm.subscription({ namespace: ns, name: 'etcd', package: 'etcd', source: 'operatorhubio-catalog', sourceNamespace: 'olm' }) as KubeObject, { dryRun: false });
    const ip = await c.admin.create(olm.installPlan({ namespace: ns, csvNames: ['etcdoperator.v0.9.4'], ownerSubs: [{ name: 'etcd', uid: sub.metadata.uid! }] }) as KubeObject, { dryRun: false });
    await c.admin.mergePatch(refOf(sub), { status: olm.subscriptionStatus({ currentCSV: 'etcdoperator.v0.9.4', installPlan: { name: ip.metadata.name, namespace: ns, uid: ip.metadata.uid! } }) }, { dryRun: false, subresource: 'status' });
    const waiting = await cli(['sweep', '--namespace', ns, '--wait', '1']);
    expect(waiting.code, waiting.stderr + waiting.stdout).toBe(4);
    expect(waiting.stdout).toContain(`still in progress after 1 s (run again later): ownerref-repair|InstallPlan/${ns}/${ip.metadata.name}`);
    expect((await cli(['sweep', '--namespace', ns, '--wait', 'soon'])).code).toBe(2);
  });

  it('exits 1 when the cluster is unreachable and 2 on usage errors', async () => {
    const bad = join(tmpdir(), 'olm-medic-unreachable.kubeconfig');
    writeFileSync(bad, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'x', cluster: { server: 'https://127.0.0.1:1' } }], users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'x', context: { cluster: 'x', user: 'u' } }], 'current-context': 'x' }));
    const down = await cli(['sweep', '--namespace', 'nope'], { KUBECONFIG: bad, KUBE_RETRIES: '0', KUBE_TIMEOUT_MS: '500' });
    expect(down.code).toBe(1);
    expect((await cli(['frobnicate'])).code).toBe(2);
    expect((await cli(['replay'])).code).toBe(2);
    const badFn = await cli(['sweep', '--function', 'nope']);
    expect(badFn.code).toBe(2);
    expect(badFn.stderr).toMatch(/unknown function "nope"/);
  });
});
