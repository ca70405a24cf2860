/**
 * Red team 28a (E2): deleting an operator's namespace is the usual way a CSV gets deleted, and then
 * EVERY action finalizer-cleanup performs for that CSV (the deletes of its cluster-scoped RBAC/
 * webhooks/APIServices, the release of its finalizer) goes without a Kubernetes Event.
 * buildEvent (shared/core/recorder.ts) puts the Event in the regarding object's namespace; the
 * apiserver's NamespaceLifecycle admission refuses every create in a Terminating namespace
 * (k8s.io/apiserver pkg/admission/plugin/namespace/lifecycle/admission.go: 403 "unable to create
 * new content in namespace X because it is being terminated", cause NamespaceTerminating; Events are
 * not exempt), and the recorder swallows the 403 (a log line). The namespace stays Terminating
 * exactly because olm-medic's finalizer holds the CSV, so this is situation A's main path, not an
 * edge. An events.k8s.io/v1 Event about a namespaced object may live in another namespace
 * (legacyValidateEvent only constrains a regarding object WITHOUT a namespace), e.g. "default",
 * where the Events about cluster-scoped objects already go.
 */
import { describe, expect, it } from 'vitest';
import { defaults, planCsv } from '../../functions/finalizer-cleanup/plan.js';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import { createRecorder } from '../../shared/core/recorder.js';
import type { Plan } from '../../shared/core/types.js';
import { KubeError } from '../../shared/kube/errors.js';
import type { KubeObject, Writer } from '../../shared/kube/types.js';
import { csv as csvFixture, csvClusterRole } from '../fixtures/olm-objects.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const NS = 'operators';
const NAME = 'etcdoperator.v0.9.4';

describe('redteam28a E2: the actions on a CSV whose namespace is being deleted are recorded', () => {
  it('the ClusterRole delete and the finalizer release each leave an Event the apiserver accepts', async () => {
    const c = csvFixture({ namespace: NS, name: NAME, finalizers: ['olm-medic.io/csv-cleanup'] }) as unknown as KubeObject;
    // Namespace deletion: the namespace controller deleted the CSV; our finalizer holds it.
    c.metadata = { ...c.metadata, uid: 'csv-uid', resourceVersion: '10', creationTimestamp: '2025-02-01T00:00:00Z', deletionTimestamp: '2025-03-01T11:59:50Z' };
    const cr = csvClusterRole({ csvName: NAME, csvNamespace: NS }) as unknown as KubeObject;
    cr.metadata = { ...cr.metadata, uid: 'cr-uid', resourceVersion: '11', creationTimestamp: '2025-02-01T00:00:00Z' };
    const ctx = { now: NOW, options: { ...defaults }, policy: { dryRun: false, protectedNamespaces: new Set<string>() } };
    const csvRef = { apiVersion: c.apiVersion, kind: c.kind, namespace: NS, name: NAME };
    const first: Plan = planCsv({ kind: 'csv', csvRef, csv: c, owned: [cr] }, ctx);
    const then: Plan = planCsv({ kind: 'csv', csvRef, csv: c, owned: [] }, ctx);
    expect([first.kind, then.kind], 'premise: delete, then release').toEqual(['act', 'act']);

    const accepted: { reason: string; namespace: string }[] = [];
    const refused: string[] = [];
    const writer: Writer = {
      async delete() {
        return 'deleted';
      },
      async mergePatch() {
        return {} as KubeObject;
      },
      // NamespaceLifecycle admission: no create in the Terminating namespace.
      async create(ev) {
        if (ev.metadata.namespace === NS) {
          refused.push(`${(ev as { reason?: string }).reason} in ${NS}`);
          throw new KubeError(403, 'Forbidden', `events.events.k8s.io "${ev.metadata.name}" is forbidden: unable to create new content in namespace ${NS} because it is being terminated`, undefined, { name: ev.metadata.name, group: 'events.k8s.io', kind: 'events', causes: [{ reason: 'NamespaceTerminating', message: `namespace ${NS} is being terminated`, field: 'metadata.namespace' }] });
        }
        accepted.push({ reason: String((ev as { reason?: string }).reason), namespace: ev.metadata.namespace! });
        return ev;
      },
    };
    const recorder = createRecorder(writer, () => NOW, () => undefined, 'olm-medic-0');
    const execute = createExecutor({ writer, recorder, policy: { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 100, windowSeconds: 60 }, budget: new ActionBudget(100, 60_000, () => NOW.getTime()) });
    const target = `ClusterServiceVersion/${NS}/${NAME}`;
    expect((await execute('finalizer-cleanup', first, target)).status).toBe('acted');
    expect((await execute('finalizer-cleanup', then, target)).status).toBe('acted');
    expect({ refused, recorded: accepted.map((e) => e.reason) }).toMatchObject({ recorded: ['CsvOwnedObjectDeleted', 'CsvCleanupCompleted'] });
    expect(accepted.map((e) => e.namespace)).toEqual(['default', 'default']);
  });
});
