/**
 * Red team 18 (failed on 742adca): a sweep scope whose values mean "nothing" was silently widened
 * or emptied. The CLI refuses `--namespace ""` ("an unset $NS must not widen the sweep to the whole
 * cluster", README "CLI"), but the same empty value in a sweep event's data (a PingSource whose
 * data was templated from an unset variable, a dead letter replayed) swept EVERY namespace,
 * answered 200; and `{"functions":[]}` swept nothing, answered 200 forever. Both are 400s now.
 */
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { listRecorder, postSweep as post, testEngine, twoDoors } from '../support/doors.js';

const { reader, lists } = listRecorder();

describe('RT18b-S1 a sweep event scoped to namespace "" is not widened to the whole cluster', () => {
  it.each(['front', 'app'] as const)('%s door: {"namespace":""} is a 400 naming data.namespace (as the CLI refuses --namespace ""), not a cluster-wide sweep', async (door) => {
    lists.length = 0;
    const engine = testEngine(allFunctions, reader);
    try {
      const { status, text } = await post(twoDoors(engine, allFunctions)[door], '{"functions":["job-conflict"],"namespace":""}');
      const clusterWide = lists.filter((l) => l.namespace === undefined).map((l) => l.what);
      // Before the fix: 200, and every list the sweep reads is cluster-wide (no namespace).
      expect({ status, clusterWide }).toEqual({ status: 400, clusterWide: [] });
      expect(JSON.parse(text).error).toMatch(/namespace/);
    } finally {
      engine.close();
    }
  });

  it('control: {"namespace":"olm"} lists in olm only', async () => {
    lists.length = 0;
    const engine = testEngine(allFunctions, reader);
    try {
      const { status } = await post(twoDoors(engine, allFunctions).front, '{"functions":["job-conflict"],"namespace":"olm"}');
      expect(status).toBe(200);
      expect(lists.length).toBeGreaterThan(0);
      expect(lists.every((l) => l.namespace === 'olm')).toBe(true);
    } finally {
      engine.close();
    }
  });
});

describe('RT18b-S2 a sweep event naming an empty list of functions', () => {
  it.each(['front', 'app'] as const)('%s door: {"functions":[]} is a 400 (it names no function to sweep), not a 200 that sweeps nothing', async (door) => {
    lists.length = 0;
    const engine = testEngine(allFunctions, reader);
    try {
      const { status, text } = await post(twoDoors(engine, allFunctions)[door], '{"functions":[]}');
      // Before the fix: 200 with an empty body, and not one list read: the periodic fallback silently never runs.
      expect({ status, lists: lists.length }).toMatchObject({ status: 400 });
      expect(JSON.parse(text).error).toMatch(/functions/);
    } finally {
      engine.close();
    }
  });
});
