/**
 * The function contract. A remediation is declarations plus a pure `plan`:
 *   targets(trigger)            which objects an event concerns — from the event alone, zero API calls
 *   sweep(read, scope)          every target worth checking, for periodic sweeps (paginated lists)
 *   observe(target, read, ctx)  the fewest reads the decision needs (undefined: target is gone)
 *   plan(observed, ctx)         pure decision: (observed, policy, now) -> Plan
 * Every write a plan asks for is performed by the executor (executor.ts), nowhere else.
 */
import { BadRequest, type ResourceTrigger } from '../events/types.js';
import { createHash, type Hash } from 'node:crypto';
import { formatRefProblem, refProblem } from '../kube/resources.js';
import { refString, type KubeObject, type ObjectMeta, type Reader, type Ref } from '../kube/types.js';

/** The object an action writes, with the preconditions the write carries. */
export interface Target extends Ref {
  uid: string;
  resourceVersion?: string;
  /** For policy: the executor refuses objects annotated with the opt-out annotation. */
  annotations?: Record<string, string>;
  /** It was already being deleted (deletionTimestamp set) when the plan read it. */
  deleting?: true;
}

export type EventType = 'Normal' | 'Warning';

/**
 * A related object whose protection applies to an action too: the owner a finding hangs on (a
 * Job's ConfigMap and CatalogSource, a pod's CatalogSource, a leftover's CSV). Policy refuses the
 * action if a guard is opted out (annotation) or lives in (or is) a protected namespace.
 */
export interface Guard {
  apiVersion?: string;
  kind: string;
  name: string;
  namespace?: string;
  annotations?: Record<string, string>;
}

/** Shared by actions and refusals: what the Kubernetes Event says. */
export interface Explained {
  /** Stable, CamelCase Event reason, e.g. UnpackJobDeleted. */
  reason: string;
  /** One human sentence: why. */
  note: string;
  /** The object the Event is about (defaults to the action's target). */
  regarding?: Target | (Ref & { uid?: string });
}

interface ActionPolicy {
  /**
   * Optional: if policy refuses it (opt-out, protected namespace), it is skipped with a Warning
   * Event and the rest of the plan goes on. Required (default): a refusal refuses the whole plan.
   */
  optional?: boolean;
  guards?: Guard[];
  /**
   * Removes only olm-medic's own finalizer. Allowed under every policy and never sent as dry-run:
   * keeping it would leave the object stuck, whatever the reason for not acting.
   */
  releasesOwnFinalizer?: true;
}

export type Action =
  | (Explained & ActionPolicy & {
      verb: 'delete';
      target: Target;
      propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
      gracePeriodSeconds?: number;
    })
  | (Explained & ActionPolicy & {
      verb: 'patch';
      /** target.resourceVersion is required: it is sent inside the merge patch as the precondition. */
      target: Target & { resourceVersion: string };
      /** JSON merge patch; null deletes a key. */
      patch: { metadata?: Record<string, unknown>; [field: string]: unknown };
    });

export type Plan = (
  /** Nothing wrong, or not ours. No Event. */
  | { kind: 'noop'; reason: string }
  /** Something is wrong but it is not safe or not ours to fix: Warning Event, no write. */
  | ({ kind: 'refuse' } & Explanation)
  /** OLM's own fix is active (or will be): Normal Event, no write; optionally look again later. */
  | ({ kind: 'defer' } & Explanation)
  /** Not yet: check again after `afterSeconds` (e.g. a fence has not expired). */
  | { kind: 'requeue'; afterSeconds: number; reason: string }
  /**
   * Perform these writes in order. `requeueAfterSeconds`: look again after they land (e.g. wait for
   * GC); dropped when policy refuses every action (nothing landed: a look would find the same).
   * `othersRecheckAfterSeconds`: what the plan waits on besides its actions (another pod inside its
   * fence, another Job deferred to OLM), looked at again then whatever becomes of the actions.
   */
  | { kind: 'act'; actions: Action[]; summary: string; requeueAfterSeconds?: number; othersRecheckAfterSeconds?: number }
) & {
  /**
   * What the same look also decided about other targets and will not write to (a look at a whole
   * catalog namespace finds several Jobs): each is recorded as its Event — Warning for a refusal,
   * Normal for a deferral — whatever the plan's own kind and whatever becomes of its actions.
   */
  explained?: Aside[];
};

/** A decision about one object that is explained (an Event) rather than written. */
export type Explanation = Explained & { regarding: Target | (Ref & { uid?: string }); requeueAfterSeconds?: number };

/** A refusal or a deferral made beside a plan (Plan.explained). */
export type Aside = { kind: 'refuse' | 'defer' } & Omit<Explanation, 'requeueAfterSeconds'>;

/** The policy a plan may take into account (the executor enforces it again for every write). */
export interface PlanPolicy {
  dryRun: boolean;
  protectedNamespaces: ReadonlySet<string>;
  /**
   * A one-off run (the CLI): no olm-medic process stays to finish what a lasting mark starts, so a
   * plan leaves none (finalizer-cleanup adds no finalizer it would have to release later).
   */
  oneShot?: boolean;
}

/** What plan() may consult besides the observed state. Pure data. */
export interface PlanContext {
  /** The apiserver's clock (never ahead of it). */
  now: Date;
  options: FunctionOptions;
  policy: PlanPolicy;
  /**
   * The apiserver's answer when the optional write `write` (writeKey(action)) to exactly this
   * object state (uid and resourceVersion) was refused for good lately in this process
   * (RefusedWrites); undefined otherwise.
   */
  refusedWrite?: (write: string, uid: string | undefined, resourceVersion: string | undefined) => string | undefined;
}

export const NO_POLICY: PlanPolicy = { dryRun: false, protectedNamespaces: new Set() };

/** What observe() gets: the plan context plus the live clock (read it AFTER the reads it dates). */
export interface ObserveContext extends PlanContext {
  /** The apiserver's clock now (refreshed by every response). */
  clock(): Date;
}

/**
 * What an event points a function at: an object, and optionally what the event said about it.
 * The hint may let observe() conclude "nothing to do" with fewer reads (it is an event's claim:
 * never a reason to act — any finding is re-read live). Events are coalesced into one run only when
 * their hints are identical (targetKey digests the whole object), so no event's claim is decided by
 * another's; re-checks (requeues, follow-ups) carry no hint (withoutHint): they look at live state.
 */
export interface TargetRef extends Ref {
  hint?: { object: KubeObject };
  /**
   * A namespace sweep's scope, for a look at a cluster-scoped object the sweep found through that
   * namespace (an Operator): the look acts only on what belongs to that namespace. Re-checks keep it.
   */
  scope?: string;
}

/** The coalescing key of a target: its object, and a digest of its hint's whole claim if any. */
export function targetKey(r: TargetRef): string {
  return r.hint ? `${refString(r)}#${claimDigest(r.hint.object)}` : refString(r);
}

const claimDigests = new WeakMap<KubeObject, string>();

/**
 * A digest of everything an event's object claims (sha256 of its JSON, base64). Two events are
 * the same claim only if their objects are equal in every field, not merely in the uid and
 * resourceVersion they state (which any sender can write). Computed once per object: the
 * duplicate filter and the coalescing key of its hint share it. V8's JSON.stringify recurses and
 * throws past ~4,500 levels of nesting, which JSON.parse and the apiserver (10,000) accept: such an
 * object is digested from the same text, written without recursion.
 */
export function claimDigest(obj: KubeObject): string {
  let d = claimDigests.get(obj);
  if (d === undefined) {
    const hash = createHash('sha256');
    let text: string | undefined;
    try {
      text = JSON.stringify(obj);
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
    }
    if (text !== undefined) hash.update(text);
    else hashJsonText(hash, obj);
    d = hash.digest('base64');
    claimDigests.set(obj, d);
  }
  return d;
}

type Frame = { array: unknown[]; i: number } | { object: Record<string, unknown>; keys: string[]; i: number; wrote: boolean };
const omitted = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/**
 * Feeds `hash` JSON.stringify(value)'s exact text, with an explicit stack instead of recursion.
 * For what JSON.parse produces: plain objects (keys in JSON.stringify's order, Object.keys), arrays,
 * strings, numbers, booleans, null; a value with toJSON (none from JSON.parse) is stringified whole.
 */
export function hashJsonText(hash: Hash, value: unknown): void {
  const stack: Frame[] = [];
  let out = '';
  let next: unknown = value;
  let pending = true;
  for (;;) {
    if (pending) {
      pending = false;
      const v = next;
      if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON !== 'function') {
        if (Array.isArray(v)) {
          out += '[';
          stack.push({ array: v, i: 0 });
        } else {
          out += '{';
          stack.push({ object: v as Record<string, unknown>, keys: Object.keys(v), i: 0, wrote: false });
        }
      } else {
        out += JSON.stringify(v) ?? 'null';
      }
    }
    if (out.length >= 65_536) {
      hash.update(out);
      out = '';
    }
    const top = stack[stack.length - 1];
    if (!top) break;
    if ('array' in top) {
      if (top.i < top.array.length) {
        if (top.i > 0) out += ',';
        const v = top.array[top.i++];
        next = omitted(v) ? null : v;
        pending = true;
      } else {
        out += ']';
        stack.pop();
      }
      continue;
    }
    while (top.i < top.keys.length) {
      const k = top.keys[top.i++]!;
      const v = top.object[k];
      if (omitted(v)) continue;
      out += `${top.wrote ? ',' : ''}${JSON.stringify(k)}:`;
      top.wrote = true;
      next = v;
      pending = true;
      break;
    }
    if (!pending) {
      out += '}';
      stack.pop();
    }
  }
  hash.update(out);
}

/**
 * A function's targets of an event (its zero-I/O targets()), each held to refProblem. A target may
 * come from the event's data (a catalog Pod's spec.nodeName names its Node), and a value no object
 * could have is the event's fault: a 400 naming it (BadRequest), never a key, a URL or a run that
 * other events join.
 */
export function targetsOf(fn: RemediationFunction<unknown>, t: ResourceTrigger): TargetRef[] {
  const refs = fn.targets(t);
  for (const r of refs) {
    const p = refProblem(r);
    if (p) throw new BadRequest(400, `${t.meta.type} data gives ${fn.name} a target ${formatRefProblem(p, `${String(r.kind)} `)}`);
  }
  return refs;
}

/** The same target without the event's claim (what a later re-check must look at). */
export function withoutHint(r: TargetRef): Ref {
  const { hint: _hint, ...ref } = r;
  return ref;
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
  targets(trigger: ResourceTrigger): TargetRef[];
  sweep(read: Reader, scope: SweepScope): AsyncIterable<TargetRef>;
  observe(target: TargetRef, read: Reader, ctx: ObserveContext): Promise<O | undefined>;
  plan(observed: O, ctx: PlanContext): Plan;
  /** Default options; overridable from the environment. */
  defaults?: FunctionOptions;
  /**
   * What runs instead when the function is disabled (ENABLED_FUNCTIONS): a reduced variant that
   * only undoes olm-medic's own marks (e.g. releases its finalizers), so disabling never strands them.
   */
  whenDisabled?: RemediationFunction<any>;
}

export type AnyFunction = RemediationFunction<any>;

/**
 * Which write an action is, for remembering the apiserver's lasting refusals (RefusedWrites): its
 * reason, and for a patch its content too — two Operators' unlabels of one CRD are two writes, and
 * one refused (an admission policy protecting one key) says nothing of the other (red team 52).
 */
export function writeKey(a: Action): string {
  return a.verb === 'patch' ? `${a.reason} ${JSON.stringify(a.patch)}` : a.reason;
}

/** The soonest of the re-checks given, in seconds (undefined or 0: none), or undefined if there is none. */
export function soonest(seconds: readonly (number | undefined)[]): number | undefined {
  const due = seconds.filter((s): s is number => Boolean(s));
  return due.length ? Math.min(...due) : undefined;
}

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
    ...(m.deletionTimestamp ? { deleting: true as const } : {}),
  };
}
