/** Production entry point: `npm start` (bundled to dist/server.mjs). Serves on $PORT (default 8080). */
import { ConfigError, loadConfig } from './core/config.js';
import { createApp } from './http/app.js';
import { createRuntime } from './wiring.js';
import { allFunctions } from '../functions/index.js';

function main(): void {
  let config;
  try {
    config = loadConfig(process.env, allFunctions);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`olm-medic: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  let rt;
  try {
    rt = createRuntime(config, allFunctions);
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

main();
