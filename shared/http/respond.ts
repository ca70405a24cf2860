/**
 * Runs one decoded event through the engine and answers it by Knative's retry rules. Both doors
 * use it — the express app (app.ts) for what it decodes, and the node:http front door
 * (dispatch.ts) for an apiserver event it has decoded itself and some function targets — so an
 * event gets the same answer, metrics and log line whichever door took it. Plain node:http
 * (no express): the front door's answers must not load the app.
 *   2xx, EMPTY body  done: acted, no-op, gone, refused by policy, not for us. (A Broker treats a
 *                    non-empty, non-CloudEvent 2xx body as a failed delivery and retries it.)
 *   429              action budget used up (Retry-After).
 *   503              apiserver unavailable or state kept changing: the Broker redelivers.
 *   500              unexpected failure (e.g. RBAC): retried, then dead-lettered.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Engine } from '../core/engine.js';
import { countByStatus, worst, type Outcome, type OutcomeStatus } from '../core/outcome.js';
import { BadRequest, type Trigger } from '../events/types.js';
import { kindLabel, typeLabel, type Metrics } from './metrics.js';

/**
 * The front door's byte budget for a request it passes to the app (dispatch.ts puts it on the
 * request under this key): the app holds it while the engine handles the request's event and
 * releases it when that handling ends, so a client that hangs up mid-handling does not free its
 * bytes early (as on the front door's own engine path).
 */
export const ENGINE_HOLD: unique symbol = Symbol('olm-medic.engine-hold');
export interface EngineHold {
  hold(): void;
  release(): void;
}

export interface RespondDeps {
  engine: Engine;
  metrics: Metrics;
  log: Logger;
}

const statusFor: Record<OutcomeStatus, number> = {
  acted: 200,
  'dry-run': 200,
  noop: 200,
  refused: 200,
  deferred: 200,
  requeued: 202,
  gone: 200,
  ignored: 200,
  'rate-limited': 429,
  transient: 503,
  failed: 500,
};

export function httpStatus(outcomes: Outcome[]): number {
  return statusFor[worst(outcomes)];
}

/** A JSON answer, as express's res.json writes it (the front door's answers must equal the app's). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * The answer to an event rejected as bad input (a BadRequest, from the decoder or found past it):
 * counted as `rejected-<status>`, logged, and answered `{error, status}` — one answer whichever
 * door and stage found it.
 */
export function answerRejected(deps: Pick<RespondDeps, 'metrics' | 'log'>, res: ServerResponse, err: BadRequest, type: unknown, ceId: unknown): void {
  deps.metrics.events.inc({ type: typeLabel(type), kind: '', outcome: `rejected-${err.status}` });
  deps.log.warn({ status: err.status, error: err.message, ceId }, 'rejected request');
  sendJson(res, err.status, { error: err.message, status: err.status });
}

/**
 * engine.handle(trigger), then the answer. `started`: when the request's handling began
 * (performance.now()), for the latency metric; `report`: the caller asked for the outcomes as a
 * JSON body (`olm-medic-report: json`; CLI and tests, never a Broker).
 */
export async function handleAndAnswer(deps: RespondDeps, trigger: Trigger, res: ServerResponse, opts: { started: number; report?: boolean }): Promise<void> {
  const { engine, metrics, log } = deps;
  let outcomes: Outcome[];
  try {
    outcomes = await engine.handle(trigger);
  } catch (e) {
    // Data no apiserver object could have, found past the decoder (a target derived from it): the
    // event's 4xx, as the decoder would answer it.
    if (e instanceof BadRequest) return answerRejected(deps, res, e, trigger.meta.type, trigger.meta.id);
    log.child({ eventId: trigger.meta.id, type: trigger.meta.type, subject: trigger.meta.subject }).error({ err: e }, 'unexpected failure handling event');
    outcomes = [{ status: 'failed', reason: e instanceof Error ? e.message : String(e) }];
  }
  const code = httpStatus(outcomes);
  const overall = worst(outcomes);
  metrics.events.inc({ type: typeLabel(trigger.meta.type), kind: trigger.kind === 'resource' ? kindLabel(trigger.ref.kind, trigger.ref.apiVersion, (a, k) => engine.wants(a, k)) : '', outcome: overall });
  metrics.eventSeconds.observe({ kind: trigger.kind }, (performance.now() - opts.started) / 1000);
  if (overall !== 'ignored') {
    const actions = outcomes.flatMap((o) => (o.actions ?? []).map((a) => `${o.function}:${a.reason}`));
    log.info({ eventId: trigger.meta.id, type: trigger.meta.type, subject: trigger.meta.subject, status: code, outcome: overall, counts: countByStatus(outcomes), ...(actions.length ? { actions } : {}) }, 'handled event');
  }
  res.setHeader('olm-medic-outcome', summary(outcomes));
  const retryAfter = outcomes.find((o) => o.status === overall)?.requeueAfterSeconds;
  if (code === 429) res.setHeader('Retry-After', String(Math.ceil(retryAfter ?? 30)));
  if (code === 503) res.setHeader('Retry-After', '1');
  if (opts.report) return sendJson(res, code, { status: overall, outcomes });
  if (code >= 400) return sendJson(res, code, { error: outcomes.filter((o) => o.status === overall).map((o) => `${o.function ?? ''} ${o.target ?? ''}: ${o.reason}`).join('; '), status: code });
  res.statusCode = code;
  res.end();
}

function summary(outcomes: Outcome[]): string {
  return Object.entries(countByStatus(outcomes))
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}
