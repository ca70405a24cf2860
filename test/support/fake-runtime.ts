/**
 * Test support: the fake runtime of proof tests that run the real functions end to end (no cluster).
 *   recordingKube(source, o)   a Kube reading `source` (objects, through memReader, or any Reader) at the
 *                              clock o.now, whose writes are recorded, then answered by o's hooks;
 *   withRuntime(kube, o, fn)   createRuntime over allFunctions on that Kube (silent log, loadConfig({})
 *                              unless o.config), fn(rt), the engine always closed;
 *   handleOnce(kube, o, t)     the same for one trigger: its outcomes;
 *   refUpdate / objectUpdate   an ApiServerSource update event in reference / resource mode;
 *   finalizerCleanupEngine(o)  an engine on the real finalizer-cleanup and the real executor (with
 *                              RefusedWrites, as shared/wiring.ts gives both) over a Reader and Writer.
 */
import pino from 'pino';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import { allFunctions } from '../../functions/index.js';
import { loadConfig, type Config } from '../../shared/core/config.js';
import { createEngine, type Engine } from '../../shared/core/engine.js';
import { createExecutor } from '../../shared/core/executor.js';
import type { Outcome } from '../../shared/core/outcome.js';
import { ActionBudget } from '../../shared/core/policy.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import { RefusedWrites } from '../../shared/core/scheduling.js';
import type { AnyFunction } from '../../shared/core/types.js';
import type { ResourceTrigger, Trigger } from '../../shared/events/types.js';
import type { DeleteOptions, Kube, KubeObject, PatchOptions, Reader, Ref, WriteOptions, Writer } from '../../shared/kube/types.js';
import { createRuntime, type Runtime } from '../../shared/wiring.js';
import { memReader } from './job-conflict-scene.js';

/** What a fake cluster answers a write with (after it is recorded); unset: 'deleted', {}, the object itself. */
export interface KubeHooks {
  delete?(ref: Ref, opts: DeleteOptions): Promise<'deleted' | 'pending' | 'gone'>;
  mergePatch?(ref: Ref, patch: Record<string, unknown>, opts: PatchOptions): Promise<KubeObject | 'gone'>;
  create?(obj: KubeObject, opts: WriteOptions): Promise<KubeObject>;
}

export interface RecordingKubeOptions extends KubeHooks {
  /** The apiserver's clock (serverNow). */
  now: () => Date;
  /** How a target's name is written in `writes` (default: as it is). */
  name?: (name: string) => string;
  /** `writes` shows each patch's body after its target. */
  patchBody?: boolean;
}

/**
 * A Kube over `source`. Every delete and merge patch is recorded first, then answered by the hook:
 *   writes   `delete <Kind> <namespace>/<name>`, `patch <Kind> <namespace>/<name>[ <patch JSON>]`
 *            (no namespace: empty);
 *   deletes  each delete's ref and options.
 */
export function recordingKube(source: KubeObject[] | Reader, o: RecordingKubeOptions): { kube: Kube; writes: string[]; deletes: { ref: Ref; opts: DeleteOptions }[] } {
  const reader = Array.isArray(source) ? memReader(source) : source;
  const shown = o.name ?? ((name: string) => name);
  const writes: string[] = [];
  const deletes: { ref: Ref; opts: DeleteOptions }[] = [];
  const kube: Kube = {
    get: reader.get.bind(reader),
    list: reader.list.bind(reader),
    async delete(ref, opts) {
      writes.push(`delete ${ref.kind} ${ref.namespace ?? ''}/${shown(ref.name)}`);
      deletes.push({ ref, opts });
      return o.delete ? o.delete(ref, opts) : 'deleted';
    },
    async mergePatch(ref, patch, opts) {
      writes.push(`patch ${ref.kind} ${ref.namespace ?? ''}/${shown(ref.name)}${o.patchBody ? ` ${JSON.stringify(patch)}` : ''}`);
      return o.mergePatch ? o.mergePatch(ref, patch, opts) : ({} as KubeObject);
    },
    async create(obj, opts) {
      return o.create ? o.create(obj, opts) : obj;
    },
    serverNow: () => o.now(),
  };
  return { kube, writes, deletes };
}

/** A mergePatch hook for scenes that must not patch anything. */
export async function noPatchExpected(): Promise<never> {
  throw new Error('no patch expected');
}

export interface FakeRuntimeOptions {
  /** The clock plans see. */
  now: () => Date;
  /** Default: loadConfig({}, allFunctions). */
  config?: Config;
}

/** Runs fn on a runtime of all the functions over `kube`; the engine is closed however fn ends. */
export async function withRuntime<T>(kube: Kube, o: FakeRuntimeOptions, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const rt = createRuntime(o.config ?? loadConfig({}, allFunctions), allFunctions, { kube, now: o.now, log: pino({ level: 'silent' }) });
  try {
    return await fn(rt);
  } finally {
    rt.engine.close();
  }
}

/** One trigger handled by a fresh runtime over `kube` (closed after). */
export function handleOnce(kube: Kube, o: FakeRuntimeOptions, trigger: Trigger): Promise<Outcome[]> {
  return withRuntime(kube, o, (rt) => rt.engine.handle(trigger));
}

/** An ApiServerSource update in reference mode (the function reads the object). */
export function refUpdate(ref: Ref, id = 'e1'): ResourceTrigger {
  return { kind: 'resource', verb: 'update', mode: 'reference', ref, meta: { id, source: '/apiserver', type: 'dev.knative.apiserver.ref.update' } };
}

/** An ApiServerSource update in resource mode, carrying `object`. */
export function objectUpdate(object: KubeObject, id = 'e1'): ResourceTrigger {
  return {
    kind: 'resource',
    verb: 'update',
    mode: 'resource',
    ref: { apiVersion: object.apiVersion, kind: object.kind, ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}), name: object.metadata.name },
    object,
    meta: { id, source: 'https://10.96.0.1:443', type: 'dev.knative.apiserver.resource.update' },
  };
}

export interface FinalizerCleanupEngineOptions {
  reader: Reader;
  writer: Writer;
  now: () => Date;
  /** Default false. */
  dryRun?: boolean;
  /** The action budget per 60 s window; default 100. */
  maxActionsPerWindow?: number;
  /** Receives every Event the executor records. */
  events?: EventRecord[];
}

/** finalizer-cleanup (manageFinalizer, orphan grace 120 s, no autoUninstall) on the real executor. */
export function finalizerCleanupEngine(o: FinalizerCleanupEngineOptions): Engine {
  const refusals = new RefusedWrites(); // as shared/wiring.ts gives both
  const maxActionsPerWindow = o.maxActionsPerWindow ?? 100;
  const policy = { dryRun: o.dryRun ?? false, protectedNamespaces: new Set<string>(), maxActionsPerWindow, windowSeconds: 60 };
  const execute = createExecutor({ writer: o.writer, recorder: { record: async (e) => void o.events?.push(e) }, policy, budget: new ActionBudget(maxActionsPerWindow, 60_000, () => o.now().getTime()), refusals });
  return createEngine({
    functions: [finalizerCleanup as AnyFunction],
    options: { 'finalizer-cleanup': { manageFinalizer: true, orphanGraceSeconds: 120, autoUninstall: false, failedCsvGraceSeconds: 3600 } },
    reader: o.reader,
    execute,
    now: o.now,
    policy: { dryRun: policy.dryRun, protectedNamespaces: policy.protectedNamespaces },
    log: pino({ level: 'silent' }),
    maxReplans: 2,
    sweepConcurrency: 1,
    followUps: 3,
    refusals,
  });
}
