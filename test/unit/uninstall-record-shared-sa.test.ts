/**
 * Red team 45, S1 (fixed): a recorded automatic uninstall never finishes when a part is shared with another
 * operator's live CSV.
 *
 * Scene (one plain install, autoUninstall on): etcd in ns-a, its CSV long Failed, no Subscription.
 * Its ServiceAccount `controller-manager` is shared with another operator in ns-a (cert-manager's
 * live, healthy CSV): OLM merges owner references on a ServiceAccount (olm-facts §4.1,
 * `mergedOwnerReferences`: "several CSVs may own the SA"). The start records `auto` with
 * ns-a/etcdoperator.v0.9.4 (the SA is used by a live CSV, so it is no "stranger"); the uninstall's
 * CSV stage deletes etcd's CSV and garbage collection drops its owner reference from the SA.
 *
 * README (finalizer-cleanup, B): "an object another operator's label is on, or that a live
 * Subscription or another live CSV still uses, only loses this key ... then it deletes the Operator
 * object". The record's rule only keeps the Operator object for "anything else — a Secret, a kind
 * olm-medic does not handle, another namespace's Namespace object". A user's `true` does exactly
 * that (the SA loses the key). Under the record, `decidedOn` (ownerCsvs ⊄ record) makes the SA
 * neither deleted nor unlabelled, and it lands in `outside`/`foreign`: the uninstall stops for good
 * with UninstallSecretsKept ("not attributable to this install"), the SA keeps etcd's key and OLM
 * keeps re-creating the Operator. A false refusal of a plain single-install automatic uninstall.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import { autoUninstallConfig, failedCsvScene, iso, KEY, NOW, recordedOperator } from '../support/auto-uninstall-scene.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';

const otherCsv: KubeObject = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: 'cert-manager.v1.14.0', namespace: 'ns-a', uid: 'csv-cm', resourceVersion: '5', creationTimestamp: iso(86400 * 9), labels: { 'operators.coreos.com/cert-manager.ns-a': '' } },
  spec: {},
  status: { phase: 'Succeeded', reason: 'InstallSucceeded', lastTransitionTime: iso(86400 * 9), lastUpdateTime: iso(86400 * 9) },
};

/** The SA after etcd's CSV went: only cert-manager's owner reference is left, etcd's key is still on it. */
const sharedSa: KubeObject = {
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: {
    name: 'controller-manager', namespace: 'ns-a', uid: 'sa-1', resourceVersion: '31', creationTimestamp: iso(86400 * 9),
    labels: { [KEY]: '', 'operators.coreos.com/cert-manager.ns-a': '', 'olm.managed': 'true' },
    ownerReferences: [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', name: 'cert-manager.v1.14.0', uid: 'csv-cm', controller: false, blockOwnerDeletion: false }],
  },
};

async function update(objects: KubeObject[]): Promise<string[]> {
  const { kube, writes } = recordingKube(objects, { now: () => NOW, patchBody: true });
  await handleOnce(kube, { now: () => NOW, config: autoUninstallConfig() }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: 'etcd.ns-a' }));
  return [...new Set(writes)];
}

describe('red team 45 S1: a shared ServiceAccount under a record only loses the key', () => {
  it("etcd's record: the SA cert-manager's live CSV still uses loses etcd's key (as under a user's `true`), so the Operator can go", async () => {
    const writes = await update([otherCsv, sharedSa, recordedOperator([sharedSa])]);
    expect(writes, 'the recorded uninstall stalls for good: the SA keeps the key, the Operator object is kept').toContain(
      `patch ServiceAccount ns-a/controller-manager {"metadata":{"labels":{"${KEY}":null},"resourceVersion":"31"}}`,
    );
  });

  it('premise (passes): the start is taken on this scene (the SA, used by a live CSV, is no stranger)', async () => {
    const [csv, op] = failedCsvScene({ createdAgo: 86400, failedAgo: 7200 });
    const sa = { ...sharedSa, metadata: { ...sharedSa.metadata, ownerReferences: [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', name: 'etcdoperator.v0.9.4', uid: 'csv-1' }, ...sharedSa.metadata.ownerReferences!] } };
    (op!.status as { components: { refs: unknown[] } }).components.refs.push({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'ns-a', name: 'controller-manager' });
    const writes = await update([csv!, otherCsv, sa, op!]);
    expect(writes.some((w) => w.startsWith('patch Operator /etcd.ns-a') && w.includes('"auto"'))).toBe(true);
  });

  it("twin (passes): a user's `true` on the same scene removes the key", async () => {
    const op = recordedOperator([sharedSa]);
    op.metadata.annotations = { [MEDIC.uninstall]: 'true' };
    delete (op.metadata as { managedFields?: unknown }).managedFields;
    const writes = await update([otherCsv, sharedSa, op]);
    expect(writes).toContain(`patch ServiceAccount ns-a/controller-manager {"metadata":{"labels":{"${KEY}":null},"resourceVersion":"31"}}`);
  });
});
