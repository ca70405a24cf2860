/**
 * Red team 18 (failed on 742adca): a sweep scope whose values mean "nothing" was silently widened
 * or emptied. The CLI refuses `--namespace ""` ("an unset $NS must not widen the sweep to the whole
 * cluster", README "CLI"), but the same empty value in a sweep event's data (a PingSource whose
 * data was templated from an unset variable, a dead letter replayed) swept EVERY namespace,
 * answered 200; and `{"functions":[]}` swept nothing, answered 200 forever. Both are 400s now.
 */
import { describe, expect, it } from 'vitest';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { allFunctions } from '../../functions/index.js';
import type { Reader } from '../../shared/kube/types.js';
import { testEngine, twoDoors } from '../support/doors.js';

const lists: { what: string; namespace?: string }[] = [];
const reader = {
  get: async () => undefined,
  list: (apiVersion: string, kind: string, opts: { namespace?: string } = {}) => {
    lists.push({ what: `${apiVersion}/${kind}`, ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}) });
    return { async *[Symbol.asyncIterator]() {} };
  },
} as unknown as Reader;

async function post(listener: RequestListener, body: string): Promise<{ status: number; text: string }> {
  const srv = createServer(listener).listen(0);
  await new Promise((r) => srv.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': 'ping-1',
        'ce-source': '/apis/v1/namespaces/olm-medic/pingsources/sweep',
        'ce-type': 'dev.knative.sources.ping',
      },
      body,
    });
    return { status: res.status, text: await res.text() };
  } finally {
    srv.closeAllConnections();
    srv.close();
  }
}

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
