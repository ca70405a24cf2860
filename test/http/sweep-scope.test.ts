/**
 * Red team 15 (S1; failed on c92846d): a sweep scope naming a function that does not exist was answered 2xx and swept
 * nothing. The CLI refuses such a name (ENABLED_FUNCTIONS: unknown function "x"), but a PingSource
 * (or any sender) whose data says {"functions":["job-conflct"]} gets a 200 forever, and no sweep
 * ever runs: the durable fallback the README relies on silently never happens.
 */
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import type { Reader } from '../../shared/kube/types.js';
import { withAdmission } from '../../shared/http/admission.js';
import { BadRequest, type SweepTrigger } from '../../shared/events/types.js';
import { listRecorder, postSweep as post, testEngine, twoDoors } from '../support/doors.js';

const { reader, lists } = listRecorder();

describe('RT15-S1 a sweep scope naming no known function', () => {
  it.each(['front', 'app'] as const)('%s door: {"functions":["job-conflct"]} (a typo) is a 4xx naming the unknown function, not a 200 that sweeps nothing', async (door) => {
    lists.length = 0;
    const engine = testEngine(allFunctions, reader);
    try {
      const d = twoDoors(engine, allFunctions);
      const { status, text } = await post(d[door], '{"functions":["job-conflct"]}');
      // What happens today: 200, empty body, and not one list was read (nothing was swept).
      expect({ status, lists: lists.length, text }).toMatchObject({ status: 400 });
      expect(text).toMatch(/job-conflct/);
    } finally {
      engine.close();
    }
  });

  it('control: the correctly spelled name sweeps (lists are read)', async () => {
    lists.length = 0;
    const engine = testEngine(allFunctions, reader);
    try {
      const { status } = await post(twoDoors(engine, allFunctions).front, '{"functions":["job-conflict"]}');
      expect(status).toBe(200);
      expect(lists.length).toBeGreaterThan(0);
    } finally {
      engine.close();
    }
  });

  it.each([
    [['*'], undefined],
    [['catalog-reschedule,job-conflict'], ['job-conflict', 'catalog-reschedule']],
  ])('RT16: a sweep of the unknown scope %j never shares an answer with the valid scope %j waiting with it (admission coalesces sweeps by scope; failed on 3a99caa)', async (bad, good) => {
    const gates: (() => void)[] = [];
    const gated = { get: async () => undefined, list: () => ({ async *[Symbol.asyncIterator]() { await new Promise<void>((r) => gates.push(r)); } }) } as unknown as Reader;
    const engine = testEngine(allFunctions, gated);
    const a = withAdmission(engine, { functions: allFunctions, maxInFlight: 4, maxQueued: 10, retryAfterSeconds: 2 });
    const sweep = (id: string, functions?: string[]): SweepTrigger => ({ kind: 'sweep', ...(functions ? { functions } : {}), meta: { id, source: 'ping', type: 'dev.knative.sources.ping' } });
    const settle = (p: Promise<unknown>) => p.then((ok) => ({ ok }), (err: unknown) => ({ err }));
    try {
      const first = settle(a.handle(sweep('first', good))); // running
      await new Promise((r) => setTimeout(r, 5));
      const badP = settle(a.handle(sweep('bad', bad))); // a new run (behind the running one, if it shared its key)
      const goodP = settle(a.handle(sweep('good', good))); // joins a waiting run of its own scope
      let all: { ok?: unknown; err?: unknown }[] | undefined;
      void Promise.all([first, badP, goodP]).then((x) => (all = x));
      for (let i = 0; i < 500 && !all; i++) {
        gates.splice(0).forEach((g) => g());
        await new Promise((r) => setTimeout(r, 1));
      }
      expect(all, 'every sweep answered').toBeDefined();
      const [, rb, rg] = all!;
      expect(rb!.err).toBeInstanceOf(BadRequest);
      expect(rg!.err, 'the valid sweep is not answered with the typo\'s 400').toBeUndefined();
    } finally {
      engine.close();
    }
  });
});
