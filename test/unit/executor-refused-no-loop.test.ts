/**
 * Red team 29a (L1): an optional write the apiserver refuses for good is re-sent every 2 seconds,
 * forever, by every plan other than planCsv.
 *
 * 6d37069 made the executor skip an optional write refused with a lasting 4xx (400/403/405/422)
 * and answer `refused` WITH the plan's requeueAfterSeconds ("a refusal is looked at again as
 * planned: the next plan knows of it (refusals) and goes on", shared/core/executor.ts act()). But
 * only finalizer-cleanup's planCsv reads PlanContext.refusedWrite. planOperator (uninstall
 * leftovers) plans the same refused write again on every look, with requeueAfterSeconds 1 or 2
 * (its stages, the unlabel of kept objects), and asksRecheck (engine.ts) re-queues a `refused`
 * outcome that has one: an endless in-process loop, each turn a full observe (every Subscription of
 * the cluster, the CSVs, the components), the refused PATCH/DELETE, and an Event create — until the
 * process restarts. Before 6d37069 the 403 was a failure: retried RECHECK_RETRIES (6) times with
 * back-off, then left to the sweep.
 *
 * Scene (the commit's own example, narrowed RBAC): an uninstall was requested on Operator etcd.ns1
 * (olm-medic.io/uninstall=true); all that is left is its CRD, which olm-medic keeps and only
 * unlabels. A cluster admin removed `patch customresourcedefinitions` from olm-medic's role (or an
 * admission policy protects CRDs): every PATCH is a 403.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import type { Engine } from '../../shared/core/engine.js';
import type { AnyFunction } from '../../shared/core/types.js';
import { KubeError } from '../../shared/kube/errors.js';
import type { KubeObject, Writer } from '../../shared/kube/types.js';
import { memReader } from '../support/job-conflict-scene.js';
import { componentLabelKey, operatorObject } from '../fixtures/olm-objects.js';
import { finalizerCleanupEngine } from '../support/fake-runtime.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const CRD = 'etcdclusters.etcd.database.coreos.com';

let engine: Engine | undefined;
afterEach(() => {
  engine?.close();
  vi.useRealTimers();
});

describe('redteam29a L1: a write the apiserver refuses for good is not re-sent every 2 s forever', () => {
  it('ten minutes after an uninstall whose last step (unlabel the kept CRD) gets a 403, the PATCH was sent a bounded number of times', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    vi.setSystemTime(NOW);
    const key = componentLabelKey('etcd', 'ns1');
    const op = operatorObject({ pkg: 'etcd', namespace: 'ns1', refs: [{ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: CRD }] }) as unknown as KubeObject;
    op.metadata = { ...op.metadata, uid: 'op-uid', resourceVersion: '5', annotations: { 'olm-medic.io/uninstall': 'true' } };
    const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: CRD, uid: 'crd-uid', resourceVersion: '7', labels: { [key]: '' } }, spec: {} } as KubeObject;
    const reader = memReader([op, crd]);
    const patches: string[] = [];
    const writer: Writer = {
      async delete() {
        throw new Error('no delete expected');
      },
      async mergePatch(ref) {
        patches.push(`${ref.kind}/${ref.name}`);
        throw new KubeError(403, 'Forbidden', `customresourcedefinitions.apiextensions.k8s.io "${CRD}" is forbidden: User "system:serviceaccount:olm-medic:olm-medic" cannot patch resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope`);
      },
      async create(o) {
        return o;
      },
    };
    engine = finalizerCleanupEngine({ reader, writer, now: () => new Date(Date.now()), maxActionsPerWindow: 1000 });
    const first = await engine.reconcile(finalizerCleanup as AnyFunction, { apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: op.metadata.name });
    expect(first.status, 'premise: the refused unlabel is skipped').toBe('refused');
    await vi.advanceTimersByTimeAsync(600_000);
    // The same refused PATCH of the same CRD state: a handful of tries at most, not one every 2 s.
    expect(patches.length).toBeLessThanOrEqual(10);
  });
});
