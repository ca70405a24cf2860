/**
 * Dead letters are kept where an operator finds them and can be replayed: the shipped dead-letter
 * sink is Knative's JobSink, which stores each event it receives as `event.MarshalJSON()` in a
 * labelled Secret (reproduced with Knative's own sdk-go code by knative-check). The README's recipe
 * (list the Secrets by label, base64-decode `event`, one per line) gives a file `olm-medic replay`
 * accepts and heals from.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toJsonl } from '../../shared/events/jsonl.js';
import { staleUnpackJob } from '../scenarios/seeds.js';
import { testCluster } from '../support/cluster.js';
import { loadStream } from '../support/streams.js';
import { api, jobsinkSecrets, render } from '../control-plane/knative.js';

const c = testCluster();
const SINK = 'olm-medic-dead-letters';

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/olm-medic.mjs', ...args], { env: { PATH: process.env.PATH ?? '', KUBECONFIG: c.kubeconfig.shipped } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('dead letters (Knative JobSink)', () => {
  it('every Trigger and the Broker dead-letter to the shipped JobSink', () => {
    const objects = render('enforce');
    expect(objects.find((o) => o.kind === 'JobSink')?.metadata.name).toBe(SINK);
    const withDelivery = objects.filter((o) => (o.spec as { delivery?: unknown } | undefined)?.delivery);
    expect(withDelivery.map((o) => (o.spec as { delivery: { deadLetterSink: { ref: { name: string } } } }).delivery.deadLetterSink.ref.name)).toEqual(withDelivery.map(() => SINK));
  });

  it('what JobSink keeps, listed by its label and decoded, is a file olm-medic replay heals from', async () => {
    const id = `dlq${Math.random().toString(36).slice(2, 5)}`;
    const s = await staleUnpackJob(c.admin, id);
    const events = join(tmpdir(), `olm-medic-${id}-delivered.jsonl`);
    writeFileSync(events, toJsonl(loadStream('stale-unpack-job.jsonl', id)));
    // Knative stores them (as JobSink would, in olm-medic's namespace; here a test namespace)
    const ns = await c.namespace('dlq');
    const secrets = jobsinkSecrets(events, ns, SINK);
    expect(secrets.length).toBeGreaterThan(5);
    for (const sec of secrets) await c.admin.create(sec, { dryRun: false });
    // the operator's recipe (README "Dead letters"): list by label, decode `event`, one per line
    const a = api(c.kubeconfig.admin);
    const list = await a.request('GET', `/api/v1/namespaces/${ns}/secrets?labelSelector=${encodeURIComponent(`sinks.knative.dev/job-sink-name=${SINK}`)}`);
    const lines = (list.body.items as { data: { event: string } }[]).map((x) => Buffer.from(x.data.event, 'base64').toString('utf8'));
    expect(lines).toHaveLength(secrets.length);
    const file = join(tmpdir(), `olm-medic-${id}-dead-letters.jsonl`);
    writeFileSync(file, lines.join('\n') + '\n');

    const dry = await cli(['replay', file, '--dry-run']);
    expect(dry.code, dry.stderr + dry.stdout).toBe(3);
    expect(await s.healed()).toBe(false);
    const real = await cli(['replay', file]);
    expect(real.code, real.stderr + real.stdout).toBe(3);
    expect(real.stdout).toContain('delete Job/');
    expect(await s.healed()).toBe(true);
  });
});
