/**
 * 200 generated event streams over the seed situations, replayed in-process through an engine
 * running as the shipped ServiceAccount against freshly seeded situations on the real control
 * plane. Each stream (seeded PRNG, reproducible from its index) takes the recorded ApiServerSource
 * stream of a randomly picked seed, rewritten to a fresh id, and applies random
 *   drops        (random events, or every event of one object),
 *   stale copies (older resourceVersions of the same object, delivered after newer ones),
 *   duplicates   (Broker redeliveries: same event id),
 *   reordering   (shuffle, reverse, or random swaps),
 * plus the events of the batch's decoys at random positions, and optionally a final sweep —
 * always when something was dropped. The decoys include adversarial look-alikes and crafted events
 * (test/support/invariants.ts: hash-named Jobs that are not OLM's, suspended Jobs, an OLM v0.25
 * namespace, catalog pods without owner / tolerating forever / inside the fence, a truncated and
 * still-subscribed Operator annotated for uninstall, names with selector syntax, whitespace,
 * unicode, path segments, over-long); a third of the streams run with the host clock an hour
 * ahead and a third an hour behind.
 *
 * Streams run in batches (seeded and replayed concurrently, one engine per stream). Within a batch:
 * first every stream's events; the streams without a sweep must heal from their events alone
 * (and the engine's own re-check timers); only then do the sweeping streams sweep, and must heal.
 * Zero unsafe actions: the batch's decoys are untouched and the audit log shows no unsafe write
 * (test/support/invariants.ts). No reconcile may fail ('failed' outcome).
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { CloudEvent } from 'cloudevents';
import { allFunctions } from '../../functions/index.js';
import type { Outcome } from '../../shared/core/outcome.js';
import { decodeEvent } from '../../shared/events/decode.js';
import { BadRequest } from '../../shared/events/types.js';
import type { Trigger } from '../../shared/events/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import type { Runtime } from '../../shared/wiring.js';
import { seeds, type Situation } from '../scenarios/seeds.js';
import { eventually, testCluster } from '../support/cluster.js';
import { AuditLog, auditNow, createDecoys, decoyViolations, takeBaseline, unsafeActions } from '../support/invariants.js';
import { seedNamespaces, streamFile, type Seed } from '../support/seeded.js';
import { loadStream, prng, shuffle } from '../support/streams.js';

const c = testCluster();
const cp = inject('controlPlane');
const audit = new AuditLog(cp.auditLog);
const MASTER_SEED = 0x5eed_2026;
const STREAMS = 200;
const BATCH = 10;
const env = { KUBECONFIG: c.kubeconfig.shipped, OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' };
const SWEEP: Trigger = { kind: 'sweep', meta: { id: 'sweep', source: 'test', type: 'io.olm-medic.sweep' } };

// ---------------------------------------------------------------------------------------------
// Stream generation (pure, deterministic from the index)
// ---------------------------------------------------------------------------------------------

interface StreamPlan {
  index: number;
  seed: Seed;
  /** 6 characters, like the recorded streams' id (the seed CSV's name depends on its length). */
  id: string;
  events: CloudEvent<unknown>[];
  ops: string[];
  drops: number;
  /** Subjects of the objects whose every event was dropped. */
  droppedObjects: string[];
  sweep: boolean;
}

const rvOf = (e: CloudEvent<unknown>): number => Number((e.data as KubeObject | undefined)?.metadata?.resourceVersion ?? NaN);

function generate(index: number): StreamPlan {
  const rnd = prng(MASTER_SEED + index * 7919);
  const int = (n: number): number => Math.floor(rnd() * n);
  const seed = seeds[int(seeds.length)]!;
  const id = `rg${String(index).padStart(4, '0')}`;
  const recorded = loadStream(streamFile(seed), id);
  let events = [...recorded];
  const ops: string[] = [];
  let drops = 0;
  const droppedObjects: string[] = [];

  // Drops: random events, and/or every event of one object.
  if (rnd() < 0.35) {
    const before = events.length;
    events = events.filter(() => rnd() >= 0.3);
    drops += before - events.length;
    if (before !== events.length) ops.push(`dropped ${before - events.length}`);
  }
  if (rnd() < 0.2) {
    const subjects = [...new Set(recorded.map((e) => e.subject))];
    const s = subjects[int(subjects.length)];
    const before = events.length;
    events = events.filter((e) => e.subject !== s);
    drops += before - events.length;
    droppedObjects.push(String(s));
    ops.push(`dropped every event of ${String(s).split('/').slice(-2).join('/')}`);
  }

  // Stale copies: an older state of the same object, delivered after a newer one.
  if (rnd() < 0.5 && events.length) {
    const n = 1 + int(3);
    for (let k = 0; k < n; k++) {
      const j = int(events.length);
      const newer = events[j]!;
      const older = recorded.filter((e) => e.subject === newer.subject && rvOf(e) < rvOf(newer));
      let stale: CloudEvent<unknown>;
      if (older.length && rnd() < 0.5) {
        stale = older[int(older.length)]!.cloneWith({ id: `stale-${index}-${k}` });
      } else {
        const data = structuredClone(newer.data) as KubeObject;
        if (!data?.metadata?.resourceVersion) continue;
        data.metadata.resourceVersion = String(Math.max(1, Number(data.metadata.resourceVersion) - 1 - int(5)));
        stale = newer.cloneWith({ id: `stale-${index}-${k}`, data });
      }
      events.splice(j + 1 + int(events.length - j), 0, stale);
      ops.push(`stale copy of ${String(newer.subject).split('/').pop()}@${rvOf(newer)} -> rv ${rvOf(stale)}`);
    }
  }

  // Duplicates: the same event (same id) delivered again later, as a Broker redelivers.
  if (rnd() < 0.6 && events.length) {
    const n = 1 + int(4);
    for (let k = 0; k < n; k++) {
      const j = int(events.length);
      events.splice(j + int(events.length - j + 1), 0, events[j]!);
    }
    ops.push(`${n} duplicate(s)`);
  }

  // Reordering.
  const r = rnd();
  if (r < 0.2) {
    events = shuffle(events, rnd);
    ops.push('shuffled');
  } else if (r < 0.35) {
    events.reverse();
    ops.push('reversed');
  } else if (r < 0.6) {
    const n = 1 + int(4);
    for (let k = 0; k < n && events.length > 1; k++) {
      const a = int(events.length);
      const b = int(events.length);
      [events[a], events[b]] = [events[b]!, events[a]!];
    }
    ops.push(`${n} swap(s)`);
  }

  const sweep = drops > 0 || rnd() < 0.25;
  if (sweep) ops.push('sweep');
  return { index, seed, id, events, ops, drops, droppedObjects, sweep };
}

const plans = Array.from({ length: STREAMS }, (_, i) => generate(i));
const batches = Array.from({ length: Math.ceil(STREAMS / BATCH) }, (_, b) => plans.slice(b * BATCH, (b + 1) * BATCH));

// ---------------------------------------------------------------------------------------------
// Running a batch
// ---------------------------------------------------------------------------------------------

interface Result {
  index: number;
  seed: string;
  ops: string[];
  outcomes: Record<string, number>;
  healedBy: 'events' | 'sweep';
  seconds: number;
}
const results: Result[] = [];

/** The host clock of stream i: on time, an hour ahead or an hour behind (decisions use the apiserver's). */
const skewOf = (index: number): number => [0, 3_600_000, -3_600_000][index % 3]!;

class StreamRun {
  rt: Runtime;
  sit!: Situation;
  triggered = false;
  readonly outcomes: Outcome[] = [];
  /** Crafted events rejected before any request (what the HTTP edge answers 400). */
  rejected = 0;
  readonly started = performance.now();
  readonly localNow = (): number => Date.now() + skewOf(this.plan.index);
  constructor(readonly plan: StreamPlan, readonly events: CloudEvent<unknown>[]) {
    this.rt = c.runtime(allFunctions, env, { localNow: this.localNow });
  }
  async handle(t: Trigger): Promise<void> {
    this.outcomes.push(...(await this.rt.engine.handle(t)));
  }
  async replay(): Promise<void> {
    for (const ev of this.events) {
      let t: Trigger;
      try {
        t = decodeEvent(ev);
      } catch (e) {
        if (!(e instanceof BadRequest)) throw e;
        this.rejected++;
        continue;
      }
      await this.handle(t);
    }
  }
  /** The CSV situation: once olm-medic has added its finalizer, the test deletes the CSV; replay again. */
  async actIfReady(waitMs: number): Promise<void> {
    const trigger = this.sit.trigger;
    if (!trigger || this.triggered) return;
    try {
      await eventually(() => trigger.ready(), `${this.sit.name} (stream ${this.plan.index}): finalizer added`, waitMs);
    } catch (e) {
      if (waitMs >= 5_000) throw e;
      return; // not ready from events alone (dropped): the sweep phase retries
    }
    await trigger.act();
    this.triggered = true;
    // Events after the change carry new resourceVersions; the recorded ones would be (correctly)
    // suppressed as duplicates by the receiver that already handled them: a fresh engine.
    this.rt.engine.close();
    this.rt = c.runtime(allFunctions, env, { localNow: this.localNow });
    await this.replay();
  }
  close(): void {
    this.rt.engine.close();
  }
}

function histogram(outcomes: Outcome[]): Record<string, number> {
  const h: Record<string, number> = {};
  for (const o of outcomes) h[o.status] = (h[o.status] ?? 0) + 1;
  return h;
}

describe('generated replays of the seed situations (duplicates, reordering, stale copies, drops, sweeps)', () => {
  afterAll(() => {
    const by = (k: (r: Result) => string): Record<string, number> => results.reduce<Record<string, number>>((h, r) => ({ ...h, [k(r)]: (h[k(r)] ?? 0) + 1 }), {});
    const outcomes: Record<string, number> = {};
    for (const r of results) for (const [k, v] of Object.entries(r.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v;
    const ops = results.flatMap((r) => r.ops.map((o) => o.replace(/ of .*| \d+.*|\d+ /g, '').trim()));
    console.log(
      `[replay-generated] ${results.length} streams healed; by seed ${JSON.stringify(by((r) => r.seed))}; healed by ${JSON.stringify(by((r) => r.healedBy))}; ` +
        `mutations ${JSON.stringify(ops.reduce<Record<string, number>>((h, o) => ({ ...h, [o]: (h[o] ?? 0) + 1 }), {}))}; outcomes ${JSON.stringify(outcomes)}; ` +
        `slowest heal ${Math.max(...results.map((r) => r.seconds)).toFixed(1)}s`,
    );
  });

  it('generates the streams deterministically', () => {
    expect(plans).toHaveLength(STREAMS);
    expect(generate(17).events.map((e) => e.id)).toEqual(generate(17).events.map((e) => e.id));
    expect(plans.filter((p) => p.drops > 0).every((p) => p.sweep)).toBe(true);
    expect(plans.some((p) => p.droppedObjects.length > 0)).toBe(true);
    expect(new Set(plans.map((p) => p.seed.name)).size).toBe(seeds.length);
  });

  it.each(batches.map((b, i) => [i, b] as const))('batch %i: every stream converges, zero unsafe actions', async (batchNo, batch) => {
    // Fresh situations and the batch's decoys, all seeded concurrently.
    const [situations, decoys] = await Promise.all([Promise.all(batch.map((p) => p.seed(c.admin, p.id))), createDecoys(c.admin, `rgb${batchNo}`)]);
    const namespaces = [...batch.flatMap((p) => seedNamespaces(p.seed, p.id)), ...decoys.namespaces];
    const baseline = await takeBaseline(c.admin, namespaces);
    const since = auditNow();
    const runs = batch.map((p, i) => {
      const rnd = prng(MASTER_SEED + p.index * 104_729 + 1);
      const events = [...p.events];
      for (const d of [...decoys.events(), ...decoys.crafted()]) events.splice(Math.floor(rnd() * (events.length + 1)), 0, d);
      const run = new StreamRun(p, events);
      run.sit = situations[i]!;
      return run;
    });

    try {
      // Phase 1: every stream's events (no sweeps anywhere yet).
      await Promise.all(
        runs.map(async (r) => {
          await r.replay();
          await r.actIfReady(r.plan.sweep ? 2_000 : 8_000);
        }),
      );
      // Phase 2: streams without a sweep heal from their events alone (plus re-check timers).
      await Promise.all(
        runs
          .filter((r) => !r.plan.sweep)
          .map(async (r) => {
            await eventually(() => r.sit.healed(), `stream ${r.plan.index} (${r.sit.name}; ${r.plan.ops.join(', ')}) healed from events`, 10_000);
            results.push({ index: r.plan.index, seed: r.plan.seed.name, ops: r.plan.ops, outcomes: histogram(r.outcomes), healedBy: 'events', seconds: (performance.now() - r.started) / 1000 });
          }),
      );
      // Phase 3: the others end with a sweep and must heal.
      await Promise.all(
        runs
          .filter((r) => r.plan.sweep)
          .map(async (r) => {
            await r.handle(SWEEP);
            if (r.sit.trigger && !r.triggered) {
              await r.actIfReady(5_000);
              await r.handle(SWEEP);
            }
            await eventually(() => r.sit.healed(), `stream ${r.plan.index} (${r.sit.name}; ${r.plan.ops.join(', ')}) healed after the sweep`, 10_000);
            results.push({ index: r.plan.index, seed: r.plan.seed.name, ops: r.plan.ops, outcomes: histogram(r.outcomes), healedBy: 'sweep', seconds: (performance.now() - r.started) / 1000 });
          }),
      );
    } finally {
      for (const r of runs) r.close();
    }

    const failed = runs.flatMap((r) => r.outcomes.filter((o) => o.status === 'failed').map((o) => `stream ${r.plan.index}: ${o.function} ${o.target}: ${o.reason}`));
    expect(failed).toEqual([]);
    // every crafted event (7 per stream, with the decoys) was rejected before any request
    for (const r of runs) expect(r.rejected > 0 && r.rejected % 7 === 0, `stream ${r.plan.index}: ${r.rejected} rejected`).toBe(true);
    expect(await decoyViolations(c.admin, decoys)).toEqual([]);
    await audit.settle(cp.shippedUser, 1_000);
    expect(unsafeActions(audit.since(since), cp.shippedUser, baseline)).toEqual([]);
  });
});
