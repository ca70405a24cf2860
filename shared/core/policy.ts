/** Policy the executor enforces for every write, whatever the function planned. */
import type { Action, Target } from './types.js';
import { MEDIC } from '../olm/constants.js';

export interface Policy {
  dryRun: boolean;
  protectedNamespaces: ReadonlySet<string>;
  /** At most this many actions per window, across all functions (a brake for event storms). */
  maxActionsPerWindow: number;
  windowSeconds: number;
}

export type Refusal = { reason: 'ProtectedNamespace' | 'OptedOut'; note: string };

/** Why policy forbids this action, or undefined if it is allowed. */
export function policyRefusal(policy: Policy, action: Action): Refusal | undefined {
  for (const obj of [action.target, action.regarding]) {
    if (!obj) continue;
    if (obj.namespace && policy.protectedNamespaces.has(obj.namespace)) {
      return { reason: 'ProtectedNamespace', note: `namespace ${obj.namespace} is protected (PROTECTED_NAMESPACES); would have: ${action.note}` };
    }
    const ann = (obj as Partial<Target>).annotations;
    if (ann?.[MEDIC.optOut] === 'true') {
      return { reason: 'OptedOut', note: `${obj.kind} ${obj.name} is annotated ${MEDIC.optOut}=true; would have: ${action.note}` };
    }
  }
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

  /** Takes n slots if available. */
  take(n: number): boolean {
    const t = this.now();
    this.stamps = this.stamps.filter((s) => t - s < this.windowMs);
    if (this.stamps.length + n > this.max) return false;
    for (let i = 0; i < n; i++) this.stamps.push(t);
    return true;
  }

  /** Seconds until the oldest slot in the window frees up. */
  retryAfterSeconds(): number {
    const oldest = this.stamps[0];
    return oldest === undefined ? 1 : Math.max(1, Math.ceil((oldest + this.windowMs - this.now()) / 1000));
  }
}
