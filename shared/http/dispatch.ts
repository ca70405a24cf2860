/**
 * The HTTP front door: a plain node:http request listener in front of the express app.
 *
 * Most of what an ApiServerSource delivers needs no action, and answering it must not cost the
 * express pipeline, the CloudEvents SDK and a full decode. Three exits answer here, each with the
 * same answer the full path gives:
 *   1. headers alone: a binary-mode apiserver event about a kind no function declares — the body
 *      is drained unread (200, empty body, `olm-medic-outcome: ignored=1`);
 *   2. a cheap look at the body: an apiserver resource event of a declared kind that the
 *      functions' own zero-I/O `targets()` say concerns nothing (a Ready Node heartbeat, a Job that
 *      is not an unpack Job, a copied CSV, ...). The body is read once, parsed once, decoded by the
 *      product's own decodeEvent (the same data validation as the full path) and offered to
 *      targets() (answered as in 1);
 *   3. the same look, when some function DOES target the event: the decoded event goes to the
 *      engine here (`handle`, respond.ts: the very function the app calls after its own decode),
 *      so the events that need work (a catalog update's thousands of Subscriptions) do not pay
 *      for express and the SDK's second parse either.
 * Everything else — other routes, structured or batched events, encodings, reports, reference-mode
 * events, and ANY request the front door is not sure about — goes to the app
 * (loaded lazily, so the first answers do not wait for express and the CloudEvents SDK), with the
 * body already read when the front door read it. Being conservative is the rule: an envelope the
 * SDK might reject (odd source, time, extension names, ...) is never answered here.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { targetsOf, type AnyFunction } from '../core/types.js';
import type { ResourceTrigger } from '../events/types.js';
import type { KubeObject } from '../kube/types.js';
import { kindLabel, typeLabel, type Metrics } from './metrics.js';
import { ENGINE_HOLD, sendJson, type EngineHold } from './respond.js';
import { answerIgnored, envelope, type Envelope } from './envelope.js';

/** decode.ts's data decoding, applied to an envelope the front door has already checked. */
export type DecodeEvent = (event: Record<string, unknown>) => { kind: string };

export interface DispatchDeps {
  /** The enabled functions (their targets() decide the body look). */
  functions: readonly AnyFunction[];
  /** Whether any enabled function declares this kind (engine.wants). */
  wants: (apiVersion: string, kind: string) => boolean;
  metrics: Metrics;
  bodyLimitBytes: number;
  /** The full app (express), possibly loaded on first use. */
  app: () => RequestListener | Promise<RequestListener>;
  /** decodeEvent from events/decode.ts; without it only the header exit is used. */
  decodeEvent?: DecodeEvent;
  /**
   * Exit 3: runs a targeted event it decoded through the engine and answers it (respond.ts's
   * handleAndAnswer, with the engine the app has); without it targeted events go to the app.
   */
  handle?: (trigger: ResourceTrigger, res: ServerResponse, started: number) => Promise<void>;
  /** Called once after the first answer (e.g. to warm the lazily loaded app in the background). */
  onFirstAnswer?: () => void;
  /**
   * Request bytes (declared Content-Length, or the body limit when unknown) allowed in flight at
   * once; past it new events get 429 + Retry-After before their body is read (default 8 MiB).
   * Bounds memory under any concurrency: each event costs a few times its size while handled.
   */
  maxInFlightBytes?: number;
}

export interface Dispatch extends RequestListener {
  /** How many requests each exit took (tests, benchmarks): 1 headers, 2 body, 3 handled, or the app. */
  readonly counts: { headers: number; body: number; handled: number; app: number };
  /** Loads the app now (background warm-up); resolves once it is there. */
  warm(): Promise<void>;
}

export function createDispatch(deps: DispatchDeps): Dispatch {
  const { functions, wants, metrics, bodyLimitBytes } = deps;
  const counts = { headers: 0, body: 0, handled: 0, app: 0 };
  let app: RequestListener | undefined;
  let loading: Promise<RequestListener> | undefined;
  let first = true;

  const answered = (): void => {
    if (!first) return;
    first = false;
    deps.onFirstAnswer?.();
  };

  function load(): Promise<RequestListener> {
    loading ??= Promise.resolve()
      .then(() => deps.app())
      .then((a) => (app = a));
    return loading;
  }

  function toApp(req: IncomingMessage, res: ServerResponse, budget: EngineHold): void {
    counts.app++;
    // The app holds the bytes while its engine handles the event (respond.ts, ENGINE_HOLD).
    (req as IncomingMessage & { [ENGINE_HOLD]?: EngineHold })[ENGINE_HOLD] = budget;
    res.once('finish', answered);
    if (app) return void app(req, res);
    // The request stays paused (nothing reads it) until the app is there.
    load().then(
      (a) => a(req, res),
      (e: unknown) => {
        loading = undefined; // the next request tries again
        sendJson(res, 500, { error: `server not ready: ${e instanceof Error ? e.message : String(e)}`, status: 500 });
      },
    );
  }

  /**
   * The body look: decode with the product's decoder, then ask every function's targets().
   * `ignored`: no function targets it; `targeted`: some function does; undefined: the app decides.
   */
  function decide(env: Envelope, body: Buffer): { ignored: string } | { targeted: ResourceTrigger } | undefined {
    if (!deps.decodeEvent || env.mode !== 'resource') return undefined;
    // Only a body that starts with '{' is read the same way here and by the SDK: its JSON parser
    // quotes a body starting with anything else (leading whitespace, a BOM) and then fails, and a
    // JSON string literal it rejects where a second parse would find an object. With
    // CE_USE_BIG_INT=true the SDK parses with json-bigint, not JSON.parse: the app decides.
    if (body[0] !== 0x7b || bigInt) return undefined;
    let data: unknown;
    try {
      data = JSON.parse(body.toString('utf8'));
    } catch {
      return undefined;
    }
    const event: Record<string, unknown> = { ...env.attrs, specversion: '1.0', datacontenttype: env.contentType, data };
    let trigger;
    try {
      trigger = deps.decodeEvent(event) as ResourceTrigger;
    } catch {
      return undefined; // the app answers with the same decoder's 4xx
    }
    if (trigger.kind !== 'resource' || !trigger.object) return undefined;
    try {
      for (const fn of functions) if (targetsOf(fn, trigger).length > 0) return { targeted: trigger };
    } catch {
      return undefined;
    }
    return { ignored: kindLabel(trigger.ref.kind, trigger.ref.apiVersion, wants) };
  }

  /** The SDK's CE_USE_BIG_INT (json-bigint instead of JSON.parse): body looks are left to the app. */
  const bigInt = process.env.CE_USE_BIG_INT === 'true';
  const maxInFlight = deps.maxInFlightBytes ?? 8 * 1_048_576;
  let inFlight = 0;

  /** What admit() gives a request (respond.ts's EngineHold): `hold` keeps its bytes counted past `close` until `release`. */
  const UNCOUNTED: EngineHold = { hold: () => undefined, release: () => undefined };

  /**
   * Admits a POST against the in-flight byte budget, or answers 429 without reading its body
   * (undefined). The bytes count until the response closes; an event the engine is handling is
   * held until that handling ends (exit 3 here, and the app's engine call through ENGINE_HOLD), so
   * a client that hangs up mid-handling does not let another event in while the engine still holds
   * this one.
   */
  function admit(req: IncomingMessage, res: ServerResponse): EngineHold | undefined {
    if (req.method !== 'POST') return UNCOUNTED;
    const declared = Number(req.headers['content-length']);
    // A compressed body (the app inflates it, up to the body limit) costs what it may inflate to.
    const ce = req.headers['content-encoding'];
    const encoded = ce !== undefined && ce.trim().toLowerCase() !== 'identity';
    const cost = !encoded && Number.isFinite(declared) && declared >= 0 ? Math.min(Math.max(declared, 1), bodyLimitBytes + 1) : bodyLimitBytes;
    // One request is always admitted (an event up to the body limit must get through eventually).
    if (inFlight > 0 && inFlight + cost > maxInFlight) {
      metrics.events.inc({ type: typeLabel(req.headers['ce-type']), kind: '', outcome: 'rate-limited' });
      res.setHeader('Retry-After', '1');
      res.setHeader('Connection', 'close');
      sendJson(res, 429, { error: `busy: ${inFlight} bytes of events in flight (limit ${maxInFlight}); retry later`, status: 429 });
      req.resume();
      return undefined;
    }
    inFlight += cost;
    let held = false;
    let counted = true;
    const release = (): void => {
      if (!counted) return;
      counted = false;
      inFlight -= cost;
    };
    res.once('close', () => {
      if (!held) release();
    });
    // hold() is only ever called while the connection is open (exit 3 at the body's end; the app
    // after checking that its client is still there), so the bytes are still counted then.
    return { hold: () => void (held = true), release };
  }

  const dispatch = ((req: IncomingMessage, res: ServerResponse): void => {
    const budget = admit(req, res);
    if (!budget) return;
    const env = envelope(req, bodyLimitBytes);
    if (!env) return toApp(req, res, budget);
    if (!wants(env.apiVersion, env.kind)) {
      counts.headers++;
      metrics.events.inc({ type: typeLabel(env.type), kind: 'other', outcome: 'ignored' });
      req.resume();
      req.once('end', () => {
        answerIgnored(res);
        answered();
      });
      return;
    }
    if (env.mode !== 'resource' || !deps.decodeEvent) return toApp(req, res, budget);
    const started = performance.now();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= bodyLimitBytes) chunks.push(c);
    });
    req.once('end', () => {
      if (size > bodyLimitBytes) return toApp(req, res, budget); // cannot happen with a correct Content-Length
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      const d = decide(env, body);
      if (d && 'targeted' in d && deps.handle) {
        counts.handled++;
        res.once('finish', answered);
        budget.hold();
        deps.handle(d.targeted, res, started).finally(budget.release).catch((e: unknown) => {
          // handleAndAnswer catches the engine's failures; this is a failure to answer at all.
          if (!res.headersSent) sendJson(res, 500, { error: `unexpected failure answering the event: ${e instanceof Error ? e.message : String(e)}`, status: 500 });
          else res.destroy();
        });
        return;
      }
      if (!d || !('ignored' in d)) {
        // Read already: the app's body parser sees a finished request and keeps this body.
        (req as IncomingMessage & { body?: Buffer }).body = body;
        return toApp(req, res, budget);
      }
      counts.body++;
      metrics.events.inc({ type: typeLabel(env.type), kind: d.ignored, outcome: 'ignored' });
      metrics.eventSeconds.observe({ kind: 'resource' }, (performance.now() - started) / 1000);
      answerIgnored(res);
      answered();
    });
  }) as Dispatch;
  Object.defineProperty(dispatch, 'counts', { value: counts });
  dispatch.warm = () =>
    load().then(
      () => undefined,
      () => undefined,
    );
  return dispatch;
}
