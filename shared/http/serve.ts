/**
 * Starts the HTTP server for a given set of functions (the library half of `npm start`).
 * The composition root (bin/server.ts) decides WHICH functions; shared/ never imports functions/.
 */
import { ConfigError, loadConfig } from '../core/config.js';
import type { AnyFunction } from '../core/types.js';
import { createApp } from './app.js';
import { createRuntime } from '../wiring.js';

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
  const app = createApp({ engine: rt.engine, metrics: rt.metrics, log: rt.log, bodyLimitBytes: config.bodyLimitBytes });
  const server = app.listen(config.port, () => {
    rt.log.info({ port: config.port, dryRun: config.dryRun, functions: config.enabledFunctions }, 'olm-medic listening');
  });
  server.keepAliveTimeout = 65_000;
  const stop = (): void => {
    rt.log.info('shutting down');
    rt.engine.close();
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('unhandledRejection', (e) => rt.log.error({ err: e }, 'unhandled rejection'));
}
