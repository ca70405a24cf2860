/**
 * Red team 15 (S1; failed on c92846d): a sweep scope naming a function that does not exist was answered 2xx and swept
 * nothing. The CLI refuses such a name (ENABLED_FUNCTIONS: unknown function "x"), but a PingSource
 * (or any sender) whose data says {"functions":["job-conflct"]} gets a 200 forever, and no sweep
 * ever runs: the durable fallback the README relies on silently never happens.
 */
import { describe, expect, it } from 'vitest';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { allFunctions } from '../../functions/index.js';
import type { Reader } from '../../shared/kube/types.js';
import { testEngine, twoDoors } from '../support/doors.js';

const lists: string[] = [];
const reader = {
  get: async () => undefined,
  list: (apiVersion: string, kind: string) => {
    lists.push(`${apiVersion}/${kind}`);
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
    srv.close();
  }
}

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
});
