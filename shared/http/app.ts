/**
 * The HTTP edge: an express app factory (it never listens; server.ts does).
 * POST / takes one CloudEvent (binary or structured). Answers follow Knative's retry rules:
 *   2xx, EMPTY body  done: acted, no-op, gone, refused by policy, not for us. (A Broker treats a
 *                    non-empty, non-CloudEvent 2xx body as a failed delivery and retries it.)
 *   400/413/415      malformed input, never retried; JSON body names the problem.
 *   429              action budget used up (Retry-After).
 *   503              apiserver unavailable or state kept changing: the Broker redelivers.
 *   500              unexpected failure (e.g. RBAC): retried, then dead-lettered.
 * The outcome summary is in the `olm-medic-outcome` header; send `olm-medic-report: json`
 * to get the full outcomes as a JSON body (CLI and tests, never a Broker).
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { decodeRequest } from '../events/decode.js';
import { BadRequest, type Trigger } from '../events/types.js';
import type { Engine } from '../core/engine.js';
import { typeLabel, type Metrics } from './metrics.js';
import { answerRejected, ENGINE_HOLD, handleAndAnswer, type EngineHold } from './respond.js';
import { answerIgnored, envelope } from './envelope.js';

export interface AppDeps {
  engine: Engine;
  metrics: Metrics;
  log: Logger;
  bodyLimitBytes: number;
  ready?: () => boolean;
}

/** Re-exported: tests and callers know it as the app's mapping. */
export { httpStatus } from './respond.js';

export function createApp(deps: AppDeps): express.Express {
  const { engine, metrics, log } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/health/liveness', (_req, res) => void res.type('text').send('OK'));
  app.get('/health/readiness', (_req, res) => {
    const ok = deps.ready?.() ?? true;
    res.status(ok ? 200 : 503).type('text').send(ok ? 'OK' : 'not ready');
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  // Header-only answer: a binary-mode apiserver event about a kind no function wants, under the
  // front door's own envelope rule (envelope.ts), so the app alone answers as front door + app do.
  // The body is drained unread. Anything the rule does not vouch for is decoded and validated in
  // full (an envelope the SDK rejects gets its 400 whatever the kind).
  app.post('/', (req: Request, res: Response, next: NextFunction) => {
    const env = envelope(req, deps.bodyLimitBytes);
    if (!env || engine.wants(env.apiVersion, env.kind)) return next();
    metrics.events.inc({ type: typeLabel(env.type), kind: 'other', outcome: 'ignored' });
    req.resume();
    req.once('end', () => answerIgnored(res));
  });

  app.post('/', express.raw({ type: () => true, limit: deps.bodyLimitBytes }), async (req: Request, res: Response) => {
    const started = performance.now();
    const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    let trigger: Trigger;
    try {
      trigger = decodeRequest(req.headers, body);
    } catch (e) {
      return answerRejected({ metrics, log }, res, e instanceof BadRequest ? e : new BadRequest(400, String(e)), req.headers['ce-type'], req.headers['ce-id']);
    }
    // The client hung up before we got here (e.g. while a compressed body was being inflated): no
    // one can receive the answer and the sender redelivers, so the engine does not start on it (its
    // bytes, released when the connection closed, must not be held uncounted).
    if (res.destroyed || req.socket?.destroyed) {
      metrics.events.inc({ type: typeLabel(req.headers['ce-type']), kind: '', outcome: 'abandoned' });
      log.info({ ceId: req.headers['ce-id'] }, 'client gone before handling: not handled (the sender redelivers)');
      return;
    }
    // The front door's byte budget (when it passed this request on) stays counted until the engine is done.
    const budget = (req as Request & { [ENGINE_HOLD]?: EngineHold })[ENGINE_HOLD];
    budget?.hold();
    try {
      await handleAndAnswer(deps, trigger, res, { started, report: req.headers['olm-medic-report'] === 'json' });
    } finally {
      budget?.release();
    }
  });

  app.all('/', (_req, res) => void res.status(405).set('Allow', 'POST').json({ error: 'send CloudEvents with POST /', status: 405 }));

  app.use((_req: Request, res: Response) => void res.status(404).json({ error: 'not found: CloudEvents go to POST /', status: 404 }));

  // Body-parser errors (too large, bad encoding) and anything else thrown in a handler.
  app.use((err: { status?: number; type?: string; message?: string }, _req: Request, res: Response, _next: NextFunction) => {
    if (err.type === 'entity.too.large') {
      return void res.status(413).json({ error: `body exceeds the limit of ${deps.bodyLimitBytes} bytes (BODY_LIMIT_BYTES)`, status: 413 });
    }
    const status = err.status && err.status >= 400 && err.status < 500 ? err.status : 400;
    if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') {
      return void res.status(415).json({ error: `unsupported body encoding: ${err.message}`, status: 415 });
    }
    log.warn({ err }, 'request rejected by body parser');
    res.status(status).json({ error: `unreadable request body: ${err.message ?? 'unknown error'}`, status });
  });
  return app;
}
