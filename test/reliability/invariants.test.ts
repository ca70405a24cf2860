/**
 * The safety checks of test/support/invariants.ts catch what they claim to, on real audit records:
 * here the *admin* plays the misbehaving controller (the checks are per user), so each unsafe
 * write is really sent to the apiserver and judged from the audit log like olm-medic's are.
 */
import { describe, expect, inject, it } from 'vitest';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { KubeObject, Ref } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { AuditLog, auditNow, createDecoys, decoyViolations, takeBaseline, unsafeActions } from '../support/invariants.js';

const cp = inject('controlPlane');
const admin = createKube(loadKubeConfig(cp.adminKubeconfig));
const audit = new AuditLog(cp.auditLog);
const refOf = (o: KubeObject): Ref => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });
const ADMIN = 'admin';

describe('the safety invariants detect unsafe writes', () => {
  it('flags deleting a running Job, a pod on a Ready node, a CRD, and any write to a decoy', async () => {
    const decoys = await createDecoys(admin, 'inv01');
    const baseline = await takeBaseline(admin, decoys.namespaces);
    expect(baseline.runningJobs.size).toBe(2); // the running invisible Job and the suspended one
    expect(baseline.readyNodePods.size).toBe(2); // the decoy catalog pod and the OLM v0.25 registry pod, both on Ready nodes
    const since = auditNow();
    expect(await decoyViolations(admin, decoys)).toEqual([]);

    const job = decoys.objects.find((o) => o.kind === 'Job')!;
    const pod = decoys.objects.find((o) => o.kind === 'Pod')!;
    const crd = decoys.objects.find((o) => o.kind === 'CustomResourceDefinition')!;
    const cr = decoys.objects.find((o) => o.kind === 'ClusterRole')!;
    await admin.delete(refOf(job), { uid: job.metadata.uid!, propagationPolicy: 'Background', dryRun: false });
    await admin.delete(refOf(pod), { uid: pod.metadata.uid!, gracePeriodSeconds: 0, dryRun: false });
    await admin.delete(refOf(crd), { uid: crd.metadata.uid!, dryRun: false });
    await admin.mergePatch(refOf(cr), { metadata: { labels: { touched: 'yes' } } }, { dryRun: false });
    // A dry-run delete changes nothing and is not flagged.
    const sub = decoys.objects.find((o) => o.kind === 'Subscription')!;
    await admin.delete(refOf(sub), { uid: sub.metadata.uid!, dryRun: true });

    await audit.settle(ADMIN, 500);
    const v = unsafeActions(audit.since(since), ADMIN, baseline);
    expect(v).toEqual([
      expect.stringMatching(/^deleted a Job running within its deadline: delete jobs\/decoy-inv01\//),
      expect.stringMatching(/^deleted a Pod whose node was Ready: delete pods\/decoy-inv01\//),
      expect.stringMatching(/^deleted a customresourcedefinition: delete customresourcedefinitions\/\/widgets\.decoyinv01\.example\.com/),
    ]);
    expect(unsafeActions(audit.since(since), cp.shippedUser, baseline)).toEqual([]);
    const dv = await decoyViolations(admin, decoys);
    expect(dv).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^decoy Job .* was deleted$/),
        expect.stringMatching(/^decoy Pod .* was deleted$/),
        expect.stringMatching(/^decoy CustomResourceDefinition .* was (deleted|modified)/),
        expect.stringMatching(/^decoy ClusterRole decoy-inv01-unrelated was modified/),
      ]),
    );
    expect(dv.some((x) => x.includes('Subscription'))).toBe(false);
  });

  it('flags removing the CSV finalizer before the objects labelled as its own are deleted, not after', async () => {
    const ns = 'inv02';
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { dryRun: false });
    const mk = async (name: string): Promise<{ csv: KubeObject; crs: KubeObject[] }> => {
      const csv = await admin.create(olm.csv({ namespace: ns, name, phase: 'Succeeded', finalizers: ['olm-medic.io/csv-cleanup'] }) as KubeObject, { dryRun: false });
      const crs = [
        await admin.create(olm.csvClusterRole({ csvName: name, csvNamespace: ns, name: `${ns}-${name}-a` } as never) as KubeObject, { dryRun: false }),
        await admin.create(olm.csvClusterRole({ csvName: name, csvNamespace: ns, name: `${ns}-${name}-b` } as never) as KubeObject, { dryRun: false }),
      ];
      return { csv, crs };
    };
    const bad = await mk('bad.v1');
    const good = await mk('good.v1');
    const baseline = await takeBaseline(admin, [ns]);
    expect(baseline.csvOwned.get(`${ns}/bad.v1`)).toHaveLength(2);
    const since = auditNow();
    for (const { csv } of [bad, good]) await admin.delete(refOf(csv), { uid: csv.metadata.uid!, dryRun: false });
    // bad: finalizer removed while one of its ClusterRoles still exists.
    await admin.delete(refOf(bad.crs[0]!), { uid: bad.crs[0]!.metadata.uid!, dryRun: false });
    await admin.mergePatch(refOf(bad.csv), { metadata: { finalizers: [] } }, { dryRun: false });
    await admin.delete(refOf(bad.crs[1]!), { uid: bad.crs[1]!.metadata.uid!, dryRun: false });
    // good: owned objects first, then the finalizer.
    for (const cr of good.crs) await admin.delete(refOf(cr), { uid: cr.metadata.uid!, dryRun: false });
    await admin.mergePatch(refOf(good.csv), { metadata: { finalizers: [] } }, { dryRun: false });

    await audit.settle(ADMIN, 500);
    expect(unsafeActions(audit.since(since), ADMIN, baseline)).toEqual([
      expect.stringMatching(new RegExp(`^finalizer olm-medic.io/csv-cleanup removed from CSV ${ns}/bad\\.v1 at .* while clusterroles//${ns}-bad\\.v1-b still existed`)),
    ]);
  });
});
