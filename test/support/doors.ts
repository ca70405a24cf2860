/**
 * An engine and the two HTTP doors over it, wired as serve.ts wires them, for HTTP tests that need
 * no apiserver: the front door (dispatch, which hands targeted events to the engine and the rest to
 * the app) and the express app alone.
 */
import type { RequestListener } from 'node:http';
import { pino } from 'pino';
import { createApp } from '../../shared/http/app.js';
import { createDispatch } from '../../shared/http/dispatch.js';
import { createMetrics } from '../../shared/http/metrics.js';
import { handleAndAnswer } from '../../shared/http/respond.js';
import { withAdmission } from '../../shared/http/admission.js';
import { createEngine, type Engine } from '../../shared/core/engine.js';
import type { AnyFunction } from '../../shared/core/types.js';
import { decodeEvent } from '../../shared/events/decode.js';
import type { Reader } from '../../shared/kube/types.js';

export const silentLog = pino({ level: 'silent' });

/** The outcome an executor reports for a plan without writing anything: act → acted, else noop. */
export const reportOnly = (async (fn: string, plan: { kind: string; reason?: string }, target: string) => ({ function: fn, target, status: plan.kind === 'act' ? 'acted' : 'noop', reason: plan.reason ?? plan.kind })) as never;

/** An engine over `functions` and `reader`, its clock fixed, no follow-ups, one replan. */
export function testEngine(functions: AnyFunction[], reader: Reader, opts: { execute?: unknown } = {}): Engine {
  return createEngine({
    functions,
    options: {},
    reader,
    execute: (opts.execute ?? reportOnly) as never,
    now: () => new Date('2026-11-20T10:00:00Z'),
    policy: { dryRun: false, protectedNamespaces: new Set() },
    log: silentLog,
    maxReplans: 1,
    sweepConcurrency: 1,
    followUps: 0,
  });
}

/** Both doors over one engine behind admission, as serve.ts wires them. */
export function twoDoors(engine: Engine, functions: AnyFunction[], bodyLimitBytes = 65536): { front: RequestListener; app: RequestListener } {
  const admitted = withAdmission(engine, { functions, maxInFlight: 16, maxQueued: 512, retryAfterSeconds: 2 });
  const metrics = createMetrics();
  const app = createApp({ engine: admitted, metrics, log: silentLog, bodyLimitBytes });
  const front = createDispatch({
    functions,
    wants: (a, k) => engine.wants(a, k),
    metrics,
    bodyLimitBytes,
    decodeEvent: decodeEvent as never,
    handle: (trigger, res, started) => handleAndAnswer({ engine: admitted, metrics, log: silentLog }, trigger, res, { started }),
    app: () => app,
  });
  return { front: front as RequestListener, app: app as unknown as RequestListener };
}

/**
 * A fake function for engine tests: the event's object is its target, `name` 'fake' and `kinds`
 * ConfigMaps unless said, `sweep` the refs given, `observe` and `plan` the test's.
 */
export function fakeFunction(spec: { observe: (ref: { name: string }) => Promise<unknown>; plan: (o: never) => unknown; name?: string; kinds?: string[]; sweep?: () => Iterable<object> }): AnyFunction {
  return {
    name: spec.name ?? 'fake',
    summary: 's',
    kinds: spec.kinds ?? ['v1/ConfigMap'],
    targets: (t: { ref: unknown }) => [t.ref],
    async *sweep() {
      yield* spec.sweep?.() ?? [];
    },
    observe: spec.observe,
    plan: spec.plan,
  } as unknown as AnyFunction;
}

/**
 * An executor that reports the plan without writing: requeue → requeued after its afterSeconds;
 * act → acted, deleting Pod ns/p, which a finalizer holds; rate → rate-limited (30 s); else noop.
 */
export const planReporter = (async (f: string, p: { kind: string; reason: string; afterSeconds?: number }, target: string) =>
  p.kind === 'requeue'
    ? { function: f, target, status: 'requeued', reason: p.reason, requeueAfterSeconds: p.afterSeconds }
    : p.kind === 'act'
      ? { function: f, target, status: 'acted', reason: p.reason, actions: [{ verb: 'delete', target: 'Pod/ns/p', reason: 'stuck', result: 'done', held: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p' } }] }
      : p.kind === 'rate'
        ? { function: f, target, status: 'rate-limited', reason: 'action budget used up; retry in 30s', requeueAfterSeconds: 30 }
        : { function: f, target, status: 'noop', reason: p.reason }) as never;

/** A reference-mode update event of ConfigMap ns/`name`, for engine.handle. */
export const configMapUpdate = (name: string, id = name): never =>
  ({ kind: 'resource', verb: 'update', mode: 'reference', ref: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name }, meta: { id, source: 's', type: 'dev.knative.apiserver.ref.update' } }) as never;

/** A Reader that finds nothing and records every list it is asked for (kind, and namespace if any). */
export function listRecorder(): { reader: Reader; lists: { what: string; namespace?: string }[] } {
  const lists: { what: string; namespace?: string }[] = [];
  const reader = {
    get: async () => undefined,
    list: (apiVersion: string, kind: string, opts: { namespace?: string } = {}) => {
      lists.push({ what: `${apiVersion}/${kind}`, ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}) });
      return { async *[Symbol.asyncIterator]() {} };
    },
  } as unknown as Reader;
  return { reader, lists };
}

/** POSTs a PingSource sweep event with `body` as its data to a server running `listener`, then closes it. */
export async function postSweep(listener: RequestListener, body: string): Promise<{ status: number; text: string }> {
  const { createServer } = await import('node:http');
  const srv = createServer(listener).listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(srv.address() as { port: number }).port}/`, {
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
