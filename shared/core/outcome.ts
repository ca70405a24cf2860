/** What handling one target (or one event) came to. One vocabulary, mapped to HTTP once (http/status.ts). */
export type OutcomeStatus =
  | 'acted' //       writes performed
  | 'dry-run' //     writes sent with dryRun=All; cluster unchanged
  | 'noop' //        nothing wrong, or not ours
  | 'refused' //     wrong but unsafe to fix, or policy forbids: Warning Event
  | 'deferred' //    OLM's own fix is active: Normal Event
  | 'requeued' //    not yet; re-checked in process after a delay (sweeps are the durable fallback)
  | 'gone' //        the target no longer exists: success
  | 'ignored' //     no function wants this event, or a duplicate
  | 'rate-limited' // the action cap for this window is used up: retry later
  | 'transient' //   apiserver overloaded/unreachable, or conflicts persisted: retry
  | 'failed'; //     unexpected (e.g. RBAC forbids): retried, then the dead-letter sink keeps it

export interface ActionResult {
  verb: string;
  target: string;
  reason: string;
  /** A write that found its target gone is not a result: the executor re-plans instead. */
  result: 'done' | 'dry-run';
  /** Deleted, but finalizers still hold it: the engine re-checks it at once for every function. */
  held?: { apiVersion: string; kind: string; namespace?: string; name: string };
}

export interface Outcome {
  function?: string;
  target?: string;
  /** A namespace-scoped look's scope (TargetRef.scope): part of the target's identity for re-checks. */
  scope?: string;
  status: OutcomeStatus;
  reason: string;
  actions?: ActionResult[];
  requeueAfterSeconds?: number;
  /** The immediate looks at objects its actions left held by a finalizer (each its own target). */
  followUps?: Outcome[];
}

// Strictly ordered, so the answer never depends on the order outcomes arrive in.
const severity: Record<OutcomeStatus, number> = {
  ignored: 0,
  noop: 1,
  gone: 2,
  deferred: 3,
  refused: 4,
  requeued: 5,
  'dry-run': 6,
  acted: 7,
  'rate-limited': 8,
  failed: 9,
  transient: 10,
};

/** The outcome that decides the HTTP status of a request that produced several. */
export function worst(outcomes: Outcome[]): OutcomeStatus {
  return outcomes.reduce<OutcomeStatus>((w, o) => (severity[o.status] > severity[w] ? o.status : w), 'ignored');
}

export function countByStatus(outcomes: Outcome[]): Partial<Record<OutcomeStatus, number>> {
  const counts: Partial<Record<OutcomeStatus, number>> = {};
  for (const o of outcomes) counts[o.status] = (counts[o.status] ?? 0) + 1;
  return counts;
}
