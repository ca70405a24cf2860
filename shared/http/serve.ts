/**
 * Starts the HTTP server for a given set of functions (the library half of `npm start`).
 * The composition root (bin/server.ts) decides WHICH functions; shared/ never imports functions/.
 *
 * Start-up does what every answer needs — configuration, Kubernetes credentials and client, the
 * engine — and listens with the node:http front door (dispatch.ts), which answers binary-mode
 * apiserver events itself (ignored, or decoded and run through the engine). The express app and
 * the CloudEvents SDK's HTTP parsing (everything else) are loaded on first use, or in the
 * background right after the first answer, whichever comes first. undici is not
 * loaded at all unless the cluster is reached through a proxy (kube/client.ts; in the bundle,
 * scripts/shims/undici.mjs loads it on that first request).
 */
import { createServer } from 'node:http';
import { ConfigError, loadConfig } from '../core/config.js';
import type { AnyFunction } from '../core/types.js';
import { decodeEvent } from '../events/decode.js';
import { withAdmission } from './admission.js';
import { createDispatch } from './dispatch.js';
import { handleAndAnswer } from './respond.js';
import { createRuntime } from '../wiring.js';

/**
 * Per function: 32 reconciles at once, 512 more waiting; past that 429 with Retry-After 2 s (a
 * Broker redelivers with its backoff). Coalescing keeps one running + one waiting run per target.
 * 32 is the kube client's connection limit (MAX_SOCKETS in kube/client.ts), which is what bounds
 * the load on the apiserver; many reconciles of a burst need no connection at all (they wait on a
 * shared list or a burst snapshot), and at 16 they, not the apiserver, set the pace (burst
 * benchmark, README "Burst (7)").
 */
const ADMISSION = { maxInFlight: 32, maxQueued: 512, retryAfterSeconds: 2 };

export function serve(functions: AnyFunction[], env: Record<string, string | undefined> = process.env): void {
  let config;
  try {
    config = loadConfig(env, functions);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`olm-medic: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  let rt;
  try {
    rt = createRuntime(config, functions);
  } catch (e) {
    process.stderr.write(`olm-medic: cannot load Kubernetes credentials: ${e instanceof Error ? e.message : e}\n`);
    process.exit(2);
  }
  // `active`: the functions the engine runs (wiring's choice): the front door asks exactly these for targets.
  const { engine, metrics, log, functions: active } = rt;
  const bodyLimitBytes = config.bodyLimitBytes;
  // Events that reach the engine: coalesced per target, bounded per function, 429 past the queue.
  const admitted = withAdmission(engine, { functions: active, ...ADMISSION });
  const dispatch = createDispatch({
    functions: active,
    wants: (apiVersion, kind) => engine.wants(apiVersion, kind),
    metrics,
    bodyLimitBytes,
    decodeEvent: decodeEvent as unknown as (e: Record<string, unknown>) => { kind: string },
    // Targeted events the front door decoded go to the same engine and answer as the app's.
    handle: (trigger, res, started) => handleAndAnswer({ engine: admitted, metrics, log }, trigger, res, { started }),
    app: async () => (await import('./app.js')).createApp({ engine: admitted, metrics, log, bodyLimitBytes }),
    onFirstAnswer: () => void setTimeout(warm, 20).unref(),
  });
  /** Loads in the background what start-up skipped: the app chunk. */
  function warm(): void {
    void dispatch.warm();
  }
  const server = createServer({ keepAliveTimeout: 65_000 }, dispatch);
  server.listen(config.port, () => {
    log.info({ port: config.port, dryRun: config.dryRun, functions: config.enabledFunctions }, 'olm-medic listening');
  });
  // Nothing asked yet: warm the app anyway once start-up is over.
  setTimeout(warm, 1_000).unref();
  const stop = (): void => {
    log.info('shutting down');
    engine.close();
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('unhandledRejection', (e) => log.error({ err: e }, 'unhandled rejection'));
}
