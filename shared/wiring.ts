/**
 * Builds the dependency graph once: config -> kube client, metrics, recorder, executor, engine.
 * Used by the HTTP server and the CLI; tests build the same graph with their own config.
 */
import pino, { type Logger } from 'pino';
import { createEngine, type Engine } from './core/engine.js';
import { createExecutor } from './core/executor.js';
import { ActionBudget } from './core/policy.js';
import { RefusedWrites } from './core/scheduling.js';
import { createRecorder } from './core/recorder.js';
import type { Config } from './core/config.js';
import type { AnyFunction } from './core/types.js';
import { createMetrics, type Metrics } from './http/metrics.js';
import { createKube, loadKubeConfig } from './kube/client.js';
import { MEDIC } from './olm/constants.js';
import { burstSnapshots, type BurstSnapshotOptions } from './kube/burst-snapshots.js';
import { shareLists } from './kube/shared-lists.js';
import type { Kube } from './kube/types.js';

export interface Runtime {
  config: Config;
  kube: Kube;
  engine: Engine;
  metrics: Metrics;
  log: Logger;
  /** The functions the engine runs (see activeFunctions). */
  functions: AnyFunction[];
}

export interface RuntimeOverrides {
  kube?: Kube;
  /** Replaces the clock plans see (default: the apiserver's, from response Date headers). */
  now?: () => Date;
  /** The host clock the apiserver's is derived from (tests skew it). */
  localNow?: () => number;
  log?: Logger;
  /**
   * The CLI's `--function`: the run's scope. Only these functions run, and no other function's
   * `whenDisabled` variant either (a look at job-conflict must not release finalizer-cleanup's
   * finalizers because finalizer-cleanup was left out of the look).
   */
  only?: readonly string[];
  /** Dry-run writes nothing at all, not even the release of olm-medic's own finalizer (the CLI). */
  strictDryRun?: boolean;
  /** A one-off run (the CLI): plans leave no lasting mark no process would finish (PlanPolicy.oneShot). */
  oneShot?: boolean;
  /** Burst-snapshot tuning (tests: a longer life, so a slow machine cannot change what a case sees). */
  burstSnapshots?: Partial<BurstSnapshotOptions>;
}

export function createRuntime(config: Config, functions: AnyFunction[], o: RuntimeOverrides = {}): Runtime {
  const log = o.log ?? pino({ level: config.logLevel, base: { app: 'olm-medic' } });
  const metrics = createMetrics();
  const kube =
    o.kube ??
    createKube(loadKubeConfig(config.kubeconfig), {
      ...(o.localNow ? { localNow: o.localNow } : {}),
      retries: config.kubeRetries,
      timeoutMs: config.kubeTimeoutMs,
      fieldManager: MEDIC.fieldManager,
      onRequest: (verb, resource, code, seconds) => {
        metrics.kubeRequests.inc({ verb, resource, code: String(code) });
        metrics.kubeSeconds.observe({ verb }, seconds);
      },
    });
  const now = o.now ?? (() => kube.serverNow());
  const recorder = createRecorder(kube, now, (result, err) => {
    metrics.recorded.inc({ result });
    if (err) log.warn({ err: err instanceof Error ? err.message : err }, 'could not record Kubernetes Event');
  });
  const policy = {
    dryRun: config.dryRun,
    releaseInDryRun: !o.strictDryRun,
    protectedNamespaces: new Set(config.protectedNamespaces),
    maxActionsPerWindow: config.maxActionsPerWindow,
    windowSeconds: config.windowSeconds,
  };
  // Optional writes the apiserver refused for good: noted by the executor, seen by the next plans.
  const refusals = new RefusedWrites(1_000, () => now().getTime());
  const execute = createExecutor({
    writer: kube,
    reader: kube,
    refusals,
    recorder,
    policy,
    budget: new ActionBudget(config.maxActionsPerWindow, config.windowSeconds * 1000, () => now().getTime()),
    onAction: (fn, action, result) => metrics.actions.inc({ function: fn, verb: action.verb, kind: action.target.kind, result }),
  });
  const enabled = activeFunctions(functions, config.enabledFunctions).filter((f) => !o.only || o.only.includes(f.name));
  const engine = createEngine({
    functions: enabled,
    options: config.functionOptions,
    // Concurrent reconciles asking for the same cluster-wide list read one (never one started before they asked).
    // In a burst of asks for one kind, one recent metadata list answers "nothing to do" checks (burst-snapshots.ts).
    reader: burstSnapshots(shareLists(kube), o.burstSnapshots),
    execute,
    now,
    policy: { dryRun: policy.dryRun, protectedNamespaces: policy.protectedNamespaces, ...(o.oneShot ? { oneShot: true } : {}) },
    log,
    maxReplans: config.maxReplans,
    sweepConcurrency: config.sweepConcurrency,
    followUps: 3,
    onPlan: (fn, decision) => metrics.plans.inc({ function: fn, decision }),
    knownFunctions: functions.map((f) => f.name),
    refusals,
  });
  return { config, kube, engine, metrics, log, functions: enabled };
}

/**
 * The functions the engine runs: the enabled ones, and for a disabled one its `whenDisabled`
 * variant (if any), which only undoes olm-medic's own marks: disabling finalizer-cleanup must not
 * strand its CSV finalizers.
 */
export function activeFunctions(functions: readonly AnyFunction[], enabledNames: readonly string[]): AnyFunction[] {
  return functions.flatMap((f) => (enabledNames.includes(f.name) ? [f] : f.whenDisabled ? [f.whenDisabled] : []));
}
