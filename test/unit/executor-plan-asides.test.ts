/**
 * "Records a Kubernetes Event for every action and every refusal": a plan may also refuse or defer
 * other targets of the same look (job-conflict: a Job whose retry needs OLM's manual steps, or one
 * left to OLM's retry interval, beside another Job it deletes). The executor records each such aside
 * as its Event (Warning / Normal), whatever the plan's kind and whatever becomes of its actions —
 * written, dry-run, refused by policy, or rate-limited.
 */
import { describe, expect, it } from 'vitest';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget, type Policy } from '../../shared/core/policy.js';
import type { EventRecord, Recorder } from '../../shared/core/recorder.js';
import type { Plan } from '../../shared/core/types.js';
import type { KubeObject, Writer } from '../../shared/kube/types.js';

const NOW = new Date('2026-03-01T12:00:00Z');

function run(plan: Plan, over: Partial<Policy> = {}, usedUp = false): Promise<{ events: string[]; writes: string[]; status: string; reason: string }> {
  const events: EventRecord[] = [];
  const writes: string[] = [];
  const writer = {
    delete: async (t: { kind: string; name: string }, o: { dryRun?: boolean }) => (writes.push(`delete ${t.kind}/${t.name}${o?.dryRun ? ' (dry-run)' : ''}`), 'deleted'),
    mergePatch: async (t: { kind: string; name: string }, _p: unknown, o: { dryRun?: boolean }) => (writes.push(`patch ${t.kind}/${t.name}${o?.dryRun ? ' (dry-run)' : ''}`), 'patched'),
    create: async (x: KubeObject) => x,
  } as unknown as Writer;
  const recorder: Recorder = { record: async (e) => void events.push(e) };
  const policy: Policy = { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 1, windowSeconds: 60, ...over };
  const budget = new ActionBudget(1, 60_000, () => NOW.getTime());
  if (usedUp) budget.take(1);
  const execute = createExecutor({ writer, recorder, policy, budget });
  return execute('job-conflict', plan, 'ns/olm').then((r) => ({ events: events.map((e) => `${e.type} ${e.reason} ${e.regarding.kind}/${e.regarding.name}`), writes, status: r.status, reason: 'reason' in r ? String(r.reason) : '' }));
}

const job = (name: string, namespace = 'olm') => ({ apiVersion: 'batch/v1', kind: 'Job', name, namespace, uid: `uid-${name}`, resourceVersion: '7' });
const acting = (namespace = 'olm'): Plan => ({
  kind: 'act',
  summary: 'removed 1 stale unpack job(s)',
  actions: [{ verb: 'delete', target: job('j1', namespace), propagationPolicy: 'Background', reason: 'UnpackJobDeleted', note: 'Deleted j1.' }],
  explained: [
    { kind: 'refuse', reason: 'UnpackRetryNeedsManualSteps', note: 'OLM <= v0.24 keeps the failure in InstallPlan ns-b/install-abc', regarding: job('j0', namespace) },
    { kind: 'defer', reason: 'DeferredToOlm', note: 'OLM retries failed unpacks itself', regarding: job('j2', namespace) },
  ],
});

describe('executor: refusals and deferrals beside a plan get their Events', () => {
  it('the action is written and the refusal recorded', async () => {
    const r = await run(acting());
    expect(r.writes).toEqual(['delete Job/j1']);
    expect(r.events).toEqual(['Warning UnpackRetryNeedsManualSteps Job/j0', 'Normal DeferredToOlm Job/j2', 'Normal UnpackJobDeleted Job/j1']);
    expect(r.status).toBe('acted');
  });

  it('dry-run: the delete only sent as a server-side dry run, both recorded', async () => {
    const r = await run(acting(), { dryRun: true });
    expect(r.writes).toEqual(['delete Job/j1 (dry-run)']);
    expect(r.status).toBe('dry-run');
    expect(r.events).toContain('Warning UnpackRetryNeedsManualSteps Job/j0');
  });

  it('the action refused by policy (protected namespace): the refusal is still recorded beside the policy Warning', async () => {
    const r = await run(acting('kube-system'), { protectedNamespaces: new Set(['kube-system']) });
    expect(r.writes).toEqual([]);
    expect(r.events[0]).toBe('Warning UnpackRetryNeedsManualSteps Job/j0');
    expect(r.events).toHaveLength(3);
    expect(r.status).toBe('refused');
    expect(r.reason, 'the outcome names the asides too').toMatch(/refused: Job j0 \(UnpackRetryNeedsManualSteps\); deferred: Job j2 \(DeferredToOlm\)$/);
  });

  it('rate-limited: the refusal is still recorded', async () => {
    const r = await run(acting(), {}, true);
    expect(r.writes).toEqual([]);
    expect(r.events[0]).toBe('Warning UnpackRetryNeedsManualSteps Job/j0');
    expect(r.status).toBe('rate-limited');
  });

  it('twin: a plan without refusals records only its action', async () => {
    const p = acting();
    delete p.explained;
    expect((await run(p)).events).toEqual(['Normal UnpackJobDeleted Job/j1']);
  });

  it('a refuse plan with another refusal beside it: both Warnings', async () => {
    const r = await run({ kind: 'refuse', reason: 'UnpackRetryNeedsManualSteps', note: 'n', regarding: job('j1'), explained: [{ kind: 'refuse', reason: 'UnpackRetryNeedsManualSteps', note: 'n', regarding: job('j0') }] });
    expect(r.events.sort()).toEqual(['Warning UnpackRetryNeedsManualSteps Job/j0', 'Warning UnpackRetryNeedsManualSteps Job/j1']);
    expect(r.status).toBe('refused');
  });
});
