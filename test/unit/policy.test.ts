import { describe, it, expect } from 'vitest';
import { ActionBudget, policyRefusal, type Policy } from '../../shared/core/policy.js';
import { countByStatus, worst, type Outcome, type OutcomeStatus } from '../../shared/core/outcome.js';
import type { Action, Target } from '../../shared/core/types.js';
import type { Ref } from '../../shared/kube/types.js';
import { httpStatus } from '../../shared/http/app.js';

const policy: Policy = {
  dryRun: false,
  protectedNamespaces: new Set(['kube-system', 'openshift-operator-lifecycle-manager']),
  maxActionsPerWindow: 10,
  windowSeconds: 60,
};

const job = (namespace: string | undefined, annotations?: Record<string, string>): Target => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  name: 'unpack-1',
  uid: 'uid-1',
  ...(namespace ? { namespace } : {}),
  ...(annotations ? { annotations } : {}),
});

const subscription = (namespace: string, annotations?: Record<string, string>): Target => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  name: 'sub',
  namespace,
  uid: 'uid-s',
  ...(annotations ? { annotations } : {}),
});

const node: Ref = { apiVersion: 'v1', kind: 'Node', name: 'n1' };

const del = (target: Target, regarding?: Action['regarding']): Action => ({
  verb: 'delete',
  target,
  reason: 'UnpackJobDeleted',
  note: 'delete the stuck unpack job',
  ...(regarding ? { regarding } : {}),
});

const patch = (target: Target, regarding?: Action['regarding']): Action => ({
  verb: 'patch',
  target: { ...target, resourceVersion: '7' },
  patch: { metadata: { annotations: { 'olm-medic.io/nudged-at': 'now' } } },
  reason: 'SubscriptionNudged',
  note: 'nudge the subscription',
  ...(regarding ? { regarding } : {}),
});

const IGNORE = 'olm-medic.io/ignore';

describe('policyRefusal', () => {
  it.each<[string, Action, 'ProtectedNamespace' | 'OptedOut' | undefined]>([
    // an ordinary namespaced target is allowed
    ['plain delete in olm', del(job('olm')), undefined],
    // an ordinary patch is allowed
    ['plain patch in operators', patch(subscription('operators')), undefined],
    // a cluster-scoped target has no namespace to protect
    ['cluster-scoped target', del({ ...node, uid: 'n' }), undefined],
    // the target itself lives in a protected namespace
    ['target in kube-system', del(job('kube-system')), 'ProtectedNamespace'],
    // any configured namespace counts, not only kube-*
    ['target in OLM namespace', patch(subscription('openshift-operator-lifecycle-manager')), 'ProtectedNamespace'],
    // the object the Event is about is in a protected namespace, even if the target is not
    ['regarding in kube-system', del(job('olm'), subscription('kube-system')), 'ProtectedNamespace'],
    // the target opted out
    ['target annotated ignore=true', del(job('olm', { [IGNORE]: 'true' })), 'OptedOut'],
    // the regarding object opted out
    ['regarding annotated ignore=true', del(job('olm'), subscription('olm', { [IGNORE]: 'true' })), 'OptedOut'],
    // only the exact string "true" opts out
    ['ignore=false is not an opt-out', del(job('olm', { [IGNORE]: 'false' })), undefined],
    // case matters: "True" is not "true"
    ['ignore=True is not an opt-out', del(job('olm', { [IGNORE]: 'True' })), undefined],
    // other annotations do not matter
    ['unrelated annotation', del(job('olm', { 'example.com/ignore': 'true' })), undefined],
    // a regarding ref without annotations (plain Ref) is fine
    ['regarding is a plain cluster-scoped ref', del(job('olm'), node), undefined],
    // a namespace that merely contains a protected name is not protected
    ['namespace name prefix is not protection', del(job('kube-system-extra')), undefined],
    // the target is checked before regarding: both protected and opted out → target's reason first
    ['target opted out, regarding protected', del(job('olm', { [IGNORE]: 'true' }), subscription('kube-system')), 'OptedOut'],
    // protection wins over opt-out on the same object
    ['target protected and opted out', del(job('kube-system', { [IGNORE]: 'true' })), 'ProtectedNamespace'],
  ])('%s', (_name, action, reason) => {
    const r = policyRefusal(policy, action);
    expect(r?.reason).toBe(reason);
    if (r) expect(r.note).toContain(action.note);
  });

  it('the protected-namespace note names the namespace and the variable', () => {
    const r = policyRefusal(policy, del(job('kube-system')));
    expect(r).toEqual({
      reason: 'ProtectedNamespace',
      note: 'namespace kube-system is protected (PROTECTED_NAMESPACES); would have: delete the stuck unpack job',
    });
  });

  it('the opt-out note names the object and the annotation', () => {
    const r = policyRefusal(policy, del(job('olm', { [IGNORE]: 'true' })));
    expect(r).toEqual({ reason: 'OptedOut', note: 'Job olm/unpack-1 is annotated olm-medic.io/ignore=true; would have: delete the stuck unpack job' });
  });

  it('an empty protected set allows kube-system', () => {
    expect(policyRefusal({ ...policy, protectedNamespaces: new Set() }, del(job('kube-system')))).toBeUndefined();
  });
});

describe('ActionBudget', () => {
  const clock = (start = 1_000_000) => {
    let t = start;
    return { now: () => t, advance: (ms: number) => void (t += ms) };
  };

  it('allows up to max actions in a window, then refuses', () => {
    const c = clock();
    const b = new ActionBudget(3, 60_000, c.now);
    expect(b.take(1)).toBe(true);
    expect(b.take(1)).toBe(true);
    expect(b.take(1)).toBe(true);
    expect(b.take(1)).toBe(false);
  });

  it('the window slides: slots free up exactly windowMs after they were taken', () => {
    const c = clock();
    const b = new ActionBudget(2, 60_000, c.now);
    expect(b.take(1)).toBe(true); // t=0
    c.advance(30_000);
    expect(b.take(1)).toBe(true); // t=30s
    expect(b.take(1)).toBe(false);
    c.advance(29_999); // t=59.999s: the first slot is still in the window
    expect(b.take(1)).toBe(false);
    c.advance(1); // t=60s: the first slot expired
    expect(b.take(1)).toBe(true);
    expect(b.take(1)).toBe(false);
    c.advance(30_000); // t=90s: the t=30s slot expired
    expect(b.take(1)).toBe(true);
  });

  it('take(n) is all-or-nothing', () => {
    const c = clock();
    const b = new ActionBudget(5, 60_000, c.now);
    expect(b.take(3)).toBe(true);
    expect(b.take(3)).toBe(false); // only 2 left: takes none
    expect(b.take(2)).toBe(true); // the failed take(3) consumed nothing
    expect(b.take(1)).toBe(false);
  });

  it('take(n) with n above max runs alone in an empty window and is charged the whole window (so an oversized plan still heals)', () => {
    const c = clock();
    const b = new ActionBudget(2, 1_000, c.now);
    expect(b.take(3)).toBe(true); // empty window: the plan of 3 runs, charged 2
    expect(b.take(1)).toBe(false); // the window is full
    c.advance(1_000);
    expect(b.take(1)).toBe(true);
    expect(b.take(3)).toBe(false); // not alone any more: waits for an empty window
    expect(b.retryAfterSeconds(3)).toBe(1);
  });

  it('a guard (the owner a finding hangs on) carries its opt-out and protected namespace to the action', () => {
    const a = { ...del(job('olm')), guards: [{ kind: 'ConfigMap', name: 'h', namespace: 'olm', annotations: { [IGNORE]: 'true' } }] };
    expect(policyRefusal(policy, a)).toMatchObject({ reason: 'OptedOut', note: expect.stringContaining('ConfigMap olm/h') });
    const b = { ...del(job('olm')), guards: [{ kind: 'ClusterServiceVersion', name: 'x', namespace: 'kube-system' }] };
    expect(policyRefusal(policy, b)).toMatchObject({ reason: 'ProtectedNamespace' });
    expect(policyRefusal(policy, del(job('olm')))).toBeUndefined();
  });

  it('take(0) always succeeds', () => {
    const c = clock();
    const b = new ActionBudget(1, 1_000, c.now);
    expect(b.take(1)).toBe(true);
    expect(b.take(0)).toBe(true);
  });

  it('retryAfterSeconds is 1 when nothing was taken', () => {
    const c = clock();
    expect(new ActionBudget(1, 60_000, c.now).retryAfterSeconds()).toBe(1);
  });

  it('retryAfterSeconds counts down to the oldest slot leaving the window, rounded up', () => {
    const c = clock();
    const b = new ActionBudget(2, 60_000, c.now);
    b.take(1); // t=0
    c.advance(10_000);
    b.take(1); // t=10s
    c.advance(30_000); // t=40s
    expect(b.take(1)).toBe(false);
    expect(b.retryAfterSeconds()).toBe(20);
    c.advance(500);
    expect(b.retryAfterSeconds()).toBe(20); // 19.5 s rounds up
    c.advance(19_499); // 1 ms before the slot frees
    expect(b.retryAfterSeconds()).toBe(1);
    c.advance(1);
    expect(b.take(1)).toBe(true);
    // the oldest slot now is the t=10s one: 10 s + 60 s - 60 s = 10 s
    expect(b.retryAfterSeconds()).toBe(10);
  });

  it('retryAfterSeconds never drops below 1, even with stale stamps', () => {
    const c = clock();
    const b = new ActionBudget(1, 1_000, c.now);
    b.take(1);
    c.advance(10_000);
    expect(b.retryAfterSeconds()).toBe(1);
  });

  it('after retryAfterSeconds has passed, a take succeeds', () => {
    const c = clock();
    const b = new ActionBudget(1, 2_500, c.now);
    b.take(1);
    c.advance(700);
    expect(b.take(1)).toBe(false);
    const wait = b.retryAfterSeconds();
    expect(wait).toBe(2);
    c.advance(wait * 1000);
    expect(b.take(1)).toBe(true);
  });
});

const o = (status: OutcomeStatus, extra: Partial<Outcome> = {}): Outcome => ({ status, reason: status, ...extra });

describe('outcome: worst', () => {
  it('no outcomes are "ignored"', () => {
    expect(worst([])).toBe('ignored');
  });

  it.each<[OutcomeStatus[], OutcomeStatus]>([
    // a single outcome is itself
    [['acted'], 'acted'],
    // noop beats ignored
    [['ignored', 'noop'], 'noop'],
    // acting is worse than doing nothing
    [['noop', 'acted', 'gone'], 'acted'],
    // refusals beat no-ops
    [['noop', 'refused'], 'refused'],
    // rate limiting beats any success
    [['acted', 'rate-limited', 'dry-run'], 'rate-limited'],
    // a failure beats rate limiting
    [['rate-limited', 'failed'], 'failed'],
    // transient is the worst: the whole event is redelivered
    [['failed', 'transient', 'acted'], 'transient'],
    // order does not matter for distinct severities
    [['transient', 'failed'], 'transient'],
  ])('worst(%j) = %s', (statuses, want) => {
    expect(worst(statuses.map((s) => o(s)))).toBe(want);
  });
});

describe('outcome: countByStatus', () => {
  it('counts each status, omitting absent ones', () => {
    expect(countByStatus([o('acted'), o('noop'), o('acted'), o('transient')])).toEqual({ acted: 2, noop: 1, transient: 1 });
  });

  it('is empty for no outcomes', () => {
    expect(countByStatus([])).toEqual({});
  });
});

describe('httpStatus (shared/http/app.ts)', () => {
  it.each<[OutcomeStatus, number]>([
    ['acted', 200],
    ['dry-run', 200],
    ['noop', 200],
    ['refused', 200],
    ['deferred', 200],
    ['requeued', 202],
    ['gone', 200],
    ['ignored', 200],
    ['rate-limited', 429],
    ['transient', 503],
    ['failed', 500],
  ])('a single %s outcome → %i', (status, code) => {
    expect(httpStatus([o(status)])).toBe(code);
  });

  it('no outcomes (foreign event) → 200', () => {
    expect(httpStatus([])).toBe(200);
  });

  it('the worst outcome decides: one transient among successes → 503', () => {
    expect(httpStatus([o('acted'), o('noop'), o('transient')])).toBe(503);
  });

  // BUG: requeued (202) shares severity 2 with deferred/refused (200) and worst() keeps the first of
  // equals, so the same set of outcomes answers 200 or 202 depending on their order.
  it('does not depend on the order of outcomes (requeued vs deferred)', () => {
    expect(httpStatus([o('deferred'), o('requeued')])).toBe(httpStatus([o('requeued'), o('deferred')]));
  });
});
