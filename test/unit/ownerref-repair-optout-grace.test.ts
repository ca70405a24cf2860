/**
 * Red team 19 (failed on 0fe76ca): ownerref-repair's opted-out Subscription (0fe76ca) skips the label grace period.
 * A fresh install: catalog-operator creates the InstallPlan owned by the Subscription; OLM's
 * adoption controller adds the component label shortly after (plan.ts defaults.labelGraceSeconds:
 * "a label-only repair waits this long, so a healthy install never sees an olm-medic write").
 */
import { describe, expect, it } from 'vitest';
import { plan } from '../../functions/ownerref-repair/plan.js';
import { NO_POLICY, type PlanContext } from '../../shared/core/types.js';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import type { KubeObject, Writer } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';

const NOW = new Date('2025-06-01T12:00:00Z');
const NS = 'operators';
const IP = 'install-7gq2x';
const CSV = 'prometheusoperator.0.47.0';

function sub(annotations?: Record<string, string>): KubeObject {
  const s = olm.subscription({ namespace: NS, name: 'prometheus', package: 'prometheus', source: 'operatorhubio-catalog', sourceNamespace: 'olm', ...(annotations ? { annotations } : {}) });
  s.status = olm.subscriptionStatus({ at: NOW, currentCSV: CSV, installPlan: { name: IP, namespace: NS, uid: 'ip-1' }, state: 'UpgradePending', installPlanGeneration: 1 });
  return { ...s, metadata: { ...s.metadata, uid: 'sub-prometheus', resourceVersion: '200' } } as KubeObject;
}

/** Created `ago` seconds ago by catalog-operator: owned by the Subscription, not labelled yet. */
function freshPlan(ago: number): KubeObject {
  const ip = olm.installPlan({ namespace: NS, name: IP, csvNames: [CSV], approval: 'Automatic', approved: true, ownerSubs: [{ name: 'prometheus', uid: 'sub-prometheus' }] });
  ip.status = olm.installPlanStatus({ phase: 'Installing', catalogSources: ['operatorhubio-catalog'] });
  return { ...ip, metadata: { ...ip.metadata, uid: 'ip-1', resourceVersion: '300', creationTimestamp: new Date(NOW.getTime() - ago * 1000).toISOString() } } as KubeObject;
}

const ctx: PlanContext = { now: NOW, options: {}, policy: NO_POLICY };

describe('redteam19 ownerref-repair: an opted-out Subscription on a healthy, fresh install', () => {
  it('control: the same fresh plan of a Subscription NOT opted out waits out the label grace (requeue, no Event)', () => {
    expect(plan({ installPlan: freshPlan(5), subscriptions: [sub()] }, ctx)).toMatchObject({ kind: 'requeue' });
  });

  it('O-G an opted-out Subscription\'s fresh plan (label not added yet by OLM) is not a finding inside the grace: no OptedOut Warning', async () => {
    const p = plan({ installPlan: freshPlan(5), subscriptions: [sub({ 'olm-medic.io/ignore': 'true' })] }, ctx);
    const events: EventRecord[] = [];
    const writer = { delete: async () => 'deleted', mergePatch: async () => ({}), create: async (o: KubeObject) => o } as unknown as Writer;
    const execute = createExecutor({ writer, recorder: { record: async (e) => void events.push(e) }, policy: { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 100, windowSeconds: 60 }, budget: new ActionBudget(100, 60_000, () => NOW.getTime()) });
    const outcome = await execute('ownerref-repair', p, `InstallPlan/${NS}/${IP}`);
    // Nothing is wrong yet (OLM adds the label within the grace): no Warning on a healthy install.
    expect({ waitsOrNothing: ['requeue', 'noop'].includes(p.kind), status: outcome.status === 'refused' ? 'refused' : 'not refused', events: events.map((e) => `${e.type} ${e.reason}`) }).toEqual({ waitsOrNothing: true, status: 'not refused', events: [] });
  });
});
