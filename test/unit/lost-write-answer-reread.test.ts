/**
 * Red team 34, L4 (fixed): the re-read that decides a lost write answer is a GET the shipped RBAC does not
 * grant for webhook configurations; its 403 is then recorded as the apiserver refusing the DELETE.
 *
 * d54b3e5 made the executor re-read (deps.reader.get, wired to the kube client in shared/wiring.ts)
 * every target whose write's answer was lost. infra/base/function-rbac.yaml grants
 * validatingwebhookconfigurations and mutatingwebhookconfigurations only [list, delete] (finalizer-
 * cleanup deletes a deleted CSV's webhooks, CsvOwnedObjectDeleted / CsvLeftoverDeleted, optional).
 * When such a DELETE's answer is lost and its retry gets 404 (the delete landed), landed() GETs the
 * webhook, gets 403 Forbidden, and that error escapes landed() (shared/core/executor.ts,
 * `const seen = await landed(action)` has no catch) into the action's outer catch, where a 403 on an
 * optional action is "an optional write the apiserver refuses for good":
 *   - a Warning Event WriteRefused "The apiserver refused to delete ValidatingWebhookConfiguration
 *     ... (403 Forbidden: ... cannot get ...)" for a delete the apiserver ACCEPTED (and no
 *     CsvOwnedObjectDeleted Event for it),
 *   - RefusedWrites notes the delete as refused for 10 min,
 *   - the outcome is 'refused', not 'acted'.
 * (A required action, or a transient failure of the GET, throws the GET's error instead: the write's
 * outcome is lost either way.)
 * SAFE: every kind olm-medic writes is one it may re-read (RBAC), and a failed re-read is never
 * reported as the apiserver refusing the write.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import { RefusedWrites } from '../../shared/core/scheduling.js';
import type { Plan } from '../../shared/core/types.js';
import { KubeError, WriteOutcomeUnknown } from '../../shared/kube/errors.js';
import type { Writer } from '../../shared/kube/types.js';

describe('(red team 34) L4: the re-read of a lost write answer', () => {
  it('RBAC: every resource the function may delete or patch it may also get (landed() re-reads it)', () => {
    const docs = parseAllDocuments(readFileSync(fileURLToPath(new URL('../../infra/base/function-rbac.yaml', import.meta.url)), 'utf8')).map((d) => d.toJS() as { kind?: string; rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[] });
    const role = docs.find((d) => d.kind === 'ClusterRole')!;
    const verbs = new Map<string, Set<string>>();
    for (const r of role.rules ?? []) for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) (verbs.get(`${res}.${g}`) ?? verbs.set(`${res}.${g}`, new Set()).get(`${res}.${g}`)!).add(v);
    const writableNotReadable = [...verbs].filter(([, v]) => (v.has('delete') || v.has('patch')) && !v.has('get')).map(([r]) => r);
    // Current: ['validatingwebhookconfigurations.admissionregistration.k8s.io', 'mutatingwebhookconfigurations.admissionregistration.k8s.io']
    expect(writableNotReadable).toEqual([]);
  });

  it('a webhook DELETE that landed (lost answer, retry 404) whose re-read is forbidden is not recorded as refused by the apiserver', async () => {
    const events: EventRecord[] = [];
    const refusals = new RefusedWrites();
    const writer: Writer = {
      delete: async () => Promise.reject(new WriteOutcomeUnknown(new KubeError(404, 'NotFound', 'validatingwebhookconfigurations.admissionregistration.k8s.io "op-webhook" not found', undefined, { name: 'op-webhook', group: 'admissionregistration.k8s.io', kind: 'validatingwebhookconfigurations' }))),
      mergePatch: async () => Promise.reject(new Error('no patch expected')),
      create: async (x) => x,
    };
    const forbidden = new KubeError(403, 'Forbidden', 'validatingwebhookconfigurations.admissionregistration.k8s.io "op-webhook" is forbidden: User "system:serviceaccount:olm-medic:olm-medic" cannot get resource "validatingwebhookconfigurations" in API group "admissionregistration.k8s.io" at the cluster scope');
    const execute = createExecutor({
      writer,
      reader: { get: async () => Promise.reject(forbidden) },
      recorder: { record: async (e) => void events.push(e) },
      policy: { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 10, windowSeconds: 60 },
      budget: new ActionBudget(10, 60_000, () => 0),
      refusals,
    });
    const vwc = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: 'op-webhook', uid: 'vwc-1', resourceVersion: '44' };
    const csv = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', namespace: 'team-a', name: 'op.v1', uid: 'csv-1' };
    const plan: Plan = {
      kind: 'act',
      summary: 'cleaning up 1 object(s) of CSV team-a/op.v1',
      requeueAfterSeconds: 2,
      actions: [{ verb: 'delete', target: vwc, propagationPolicy: 'Background', optional: true, regarding: csv, reason: 'CsvOwnedObjectDeleted', note: 'Deleted ValidatingWebhookConfiguration op-webhook, owned by CSV team-a/op.v1 which is being deleted.' }],
    };
    const out = await execute('finalizer-cleanup', plan, 'ClusterServiceVersion/team-a/op.v1');
    // Current code: status 'refused', Event WriteRefused "The apiserver refused to delete ... (403 Forbidden ... cannot get ...)",
    // and the (accepted) delete noted in RefusedWrites.
    expect(events.map((e) => e.reason)).not.toContain('WriteRefused');
    expect(refusals.get('CsvOwnedObjectDeleted', 'vwc-1', '44')).toBeUndefined();
    expect(out.status).not.toBe('refused');
  });
});
