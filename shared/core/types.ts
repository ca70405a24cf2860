/**
 * The function contract. A remediation is declarations plus a pure `plan`:
 *   targets(trigger)            which objects an event concerns — from the event alone, zero API calls
 *   sweep(read, scope)          every target worth checking, for periodic sweeps (paginated lists)
 *   observe(target, read, ctx)  the fewest reads the decision needs (undefined: target is gone)
 *   plan(observed, ctx)         pure decision: (observed, policy, now) -> Plan
 * Every write a plan asks for is performed by the executor (executor.ts), nowhere else.
 */
import type { ResourceTrigger } from '../events/types.js';
import type { KubeObject, ObjectMeta, Reader, Ref } from '../kube/types.js';

/** The object an action writes, with the preconditions the write carries. */
export interface Target extends Ref {
  uid: string;
  resourceVersion?: string;
  /** For policy: the executor refuses objects annotated with the opt-out annotation. */
  annotations?: Record<string, string>;
}

export type EventType = 'Normal' | 'Warning';

/** Shared by actions and refusals: what the Kubernetes Event says. */
export interface Explained {
  /** Stable, CamelCase Event reason, e.g. UnpackJobDeleted. */
  reason: string;
  /** One human sentence: why. */
  note: string;
  /** The object the Event is about (defaults to the action's target). */
  regarding?: Target | (Ref & { uid?: string });
}

export type Action =
  | (Explained & {
      verb: 'delete';
      target: Target;
      propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
      gracePeriodSeconds?: number;
    })
  | (Explained & {
      verb: 'patch';
      /** target.resourceVersion is required: it is sent inside the merge patch as the precondition. */
      target: Target & { resourceVersion: string };
      /** JSON merge patch; null deletes a key. */
      patch: { metadata?: Record<string, unknown>; [field: string]: unknown };
    });

export type Plan =
  /** Nothing wrong, or not ours. No Event. */
  | { kind: 'noop'; reason: string }
  /** Something is wrong but it is not safe or not ours to fix: Warning Event, no write. */
  | ({ kind: 'refuse' } & Explained & { regarding: Target | (Ref & { uid?: string }); requeueAfterSeconds?: number })
  /** OLM's own fix is active (or will be): Normal Event, no write; optionally look again later. */
  | ({ kind: 'defer' } & Explained & { regarding: Target | (Ref & { uid?: string }); requeueAfterSeconds?: number })
  /** Not yet: check again after `afterSeconds` (e.g. a fence has not expired). */
  | { kind: 'requeue'; afterSeconds: number; reason: string }
  /** Perform these writes in order. `then` re-checks after they land (e.g. wait for GC). */
  | { kind: 'act'; actions: Action[]; summary: string; requeueAfterSeconds?: number };

/** What plan() may consult besides the observed state. Pure data. */
export interface PlanContext {
  now: Date;
  options: FunctionOptions;
}

/** Per-function settings (fences, grace periods, opt-ins), validated at start-up. */
export type FunctionOptions = Record<string, string | number | boolean>;

export interface SweepScope {
  namespace?: string;
}

export interface RemediationFunction<O = unknown> {
  name: string;
  /** One line for the README and logs. */
  summary: string;
  /** The kinds whose events can concern this function ("<apiVersion>/<kind>"); others are dropped unread. */
  kinds: string[];
  /** Which targets an event concerns, from the event alone. Must not do I/O. */
  targets(trigger: ResourceTrigger): Ref[];
  sweep(read: Reader, scope: SweepScope): AsyncIterable<Ref>;
  observe(target: Ref, read: Reader, ctx: PlanContext): Promise<O | undefined>;
  plan(observed: O, ctx: PlanContext): Plan;
  /** Default options; overridable from the environment. */
  defaults?: FunctionOptions;
}

export type AnyFunction = RemediationFunction<any>;

export function target(obj: KubeObject): Target {
  const m = obj.metadata;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: m.name,
    ...(m.namespace ? { namespace: m.namespace } : {}),
    uid: m.uid ?? '',
    ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
    ...(m.annotations ? { annotations: m.annotations } : {}),
  };
}
