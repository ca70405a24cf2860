/** Policy the executor enforces for every write, whatever the function planned. */
import type { Action, Guard, Target } from './types.js';
import { MEDIC } from '../olm/constants.js';

export interface Policy {
  dryRun: boolean;
  /**
   * In dry-run, still release olm-medic's own finalizer (default): a server switched to dry-run
   * must not leave the CSVs it marked while enforcing stuck in deletion. The CLI's dry-run sets it
   * false: a look that promises "nothing was changed" writes nothing at all.
   */
  releaseInDryRun?: boolean;
  protectedNamespaces: ReadonlySet<string>;
  /** At most this many actions per window, across all functions (a brake for event storms). */
  maxActionsPerWindow: number;
  windowSeconds: number;
}

export type Refusal = { reason: 'ProtectedNamespace' | 'OptedOut' | 'InvalidName'; note: string };

/**
 * Why policy forbids this action, or undefined if it is allowed. Checked on the target, the object
 * the action is about, and every guard (the owners the finding hangs on).
 */
export function policyRefusal(policy: Pick<Policy, 'protectedNamespaces'>, action: Action): Refusal | undefined {
  for (const obj of [action.target, action.regarding, ...(action.guards ?? [])]) {
    const r = obj && objectRefusal(policy, obj);
    if (r) return { reason: r.reason, note: `${r.why}; would have: ${action.note}` };
  }
  return undefined;
}

/** Why policy keeps this one object (a target, or a guard an action hangs on), or undefined. */
export function objectRefusal(policy: Pick<Policy, 'protectedNamespaces'>, obj: Guard | Target): { reason: 'ProtectedNamespace' | 'OptedOut'; why: string } | undefined {
  const ns = obj.kind === 'Namespace' && !obj.namespace ? obj.name : obj.namespace;
  if (ns && policy.protectedNamespaces.has(ns)) return { reason: 'ProtectedNamespace', why: `namespace ${ns} is protected (PROTECTED_NAMESPACES)` };
  if (obj.annotations?.[MEDIC.optOut] === 'true') return { reason: 'OptedOut', why: `${obj.kind} ${obj.namespace ? `${obj.namespace}/` : ''}${obj.name} is annotated ${MEDIC.optOut}=true` };
  return undefined;
}

/** Sliding-window cap on actions. The clock is injected. */
export class ActionBudget {
  private stamps: number[] = [];
  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /**
   * Takes n slots if available. A plan larger than the whole budget is charged the whole window
   * (it runs alone, once the window is empty) instead of being refused forever: a failed unpack Job
   * blocking more Subscriptions than the cap, or a CSV with more leftovers, must still heal.
   */
  take(n: number): boolean {
    const t = this.now();
    this.stamps = this.stamps.filter((s) => t - s < this.windowMs);
    const charge = Math.min(n, this.max);
    if (this.stamps.length + charge > this.max) return false;
    for (let i = 0; i < charge; i++) this.stamps.push(t);
    return true;
  }

  /** Seconds until enough slots free up for a plan of n actions (the oldest, for n = 1). */
  retryAfterSeconds(n = 1): number {
    const need = Math.min(Math.max(n, 1), this.max);
    const idx = this.stamps.length + need - this.max - 1;
    const stamp = this.stamps[Math.max(0, idx)];
    return stamp === undefined ? 1 : Math.max(1, Math.ceil((stamp + this.windowMs - this.now()) / 1000));
  }
}
