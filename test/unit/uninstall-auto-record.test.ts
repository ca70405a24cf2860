/**
 * Red team 39 (A1) (fixed): an automatic uninstall was recorded while policy kept the CSV it rests on,
 * and that record later uninstalled the operator after it had recovered.
 *
 * functions/finalizer-cleanup/plan.ts, planOperator(): with autoUninstall, uninstallGate() found the
 * CSV long Failed and the plan annotated the Operator `olm-medic.io/uninstall=true`
 * (AutoUninstallStarted) so that "the next rounds carry on as if requested". The gate did not look at
 * policy: a CSV the user opted out (`olm-medic.io/ignore=true`) still got the decision recorded; the
 * plan then kept the CSV and stopped there, leaving the annotation on the Operator object, and from
 * then on the gate read it as the user's request without looking at the CSV's phase at all.
 * Path: autoUninstall on; an operator whose Subscription was deleted (to pin a version) fails; the
 * user opts its CSV out while debugging; olm-medic records the automatic uninstall anyway. The user
 * fixes the install (OLM moves the CSV back to Succeeded) and lifts the opt-out: olm-medic deleted the
 * healthy CSV, then its Deployments, ServiceAccounts and RBAC, on its own hour-old decision. The same
 * record outlived any automatic uninstall that stopped short of deleting the Operator object.
 * Now: an automatic uninstall is not started while policy keeps a CSV it rests on (a refusal, with its
 * Warning Event); its record is `olm-medic.io/uninstall=auto`, carried on only while autoUninstall is
 * on, no Subscription uses the operator and every CSV under the key that is not being deleted is long
 * Failed — otherwise it is taken back (AutoUninstallCancelled), and nothing is deleted. A user's
 * `true` stays a request until the user removes it.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/core/config.js';
import { allFunctions } from '../../functions/index.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { autoUninstallConfig, failedCsvScene, iso, operatorUpdate } from '../support/auto-uninstall-scene.js';

const OPT_OUT = 'olm-medic.io/ignore';
const MARKER = 'olm-medic.io/uninstall';
const CSVS = 'olm-medic.io/uninstall-csvs';
const statusWrite = (secondsAgo: number) => [
  { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1alpha1', subresource: 'status', time: iso(secondsAgo), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:phase': {} } } },
];

/** The CSV Failed for 2 h (clocks agree) and its Operator; `marker` on the Operator, `csv` changes on the CSV. */
function scene(o: { marker?: string; csvAnnotations?: Record<string, string>; succeeded?: boolean } = {}): KubeObject[] {
  const [csv, operator] = failedCsvScene({ createdAgo: 86400, failedAgo: 7200, managedFields: statusWrite(o.succeeded ? 600 : 7200) });
  if (o.csvAnnotations) csv!.metadata.annotations = o.csvAnnotations;
  if (o.succeeded) csv!.status = { phase: 'Succeeded', reason: 'InstallSucceeded', lastTransitionTime: iso(600), lastUpdateTime: iso(600) };
  if (o.marker) operator!.metadata.annotations = { [MARKER]: o.marker, ...(o.marker === 'auto' ? { [CSVS]: 'ns-a/etcdoperator.v0.9.4' } : {}) };
  return [csv!, operator!];
}
// The scene does not change under the writes (recordingKube), so a look again repeats them: each once.
const once = (ws: string[]): string[] => [...new Set(ws)];
const operatorPatches = (writes: string[]) => once(writes.filter((w) => w.startsWith('patch Operator')));
const csvDeletes = (writes: string[]) => once(writes.filter((w) => w.startsWith('delete ClusterServiceVersion')));
// The record: `auto` and the CSV it was decided on; taken back, both go.
const markerPatch = (value: 'auto' | null) => `patch Operator /etcd.ns-a {"metadata":{"annotations":{"${MARKER}":${JSON.stringify(value)},"${CSVS}":${value ? '"ns-a/etcdoperator.v0.9.4"' : 'null'}},"resourceVersion":"11"}}`;

describe('red team 39 A1: an automatic uninstall is not started while policy keeps its CSV', () => {
  it('a long-Failed CSV that is opted out: no automatic uninstall is recorded on the Operator, nothing is deleted', async () => {
    const writes = await operatorUpdate(scene({ csvAnnotations: { [OPT_OUT]: 'true' } }), autoUninstallConfig());
    expect({ patches: operatorPatches(writes), deletes: csvDeletes(writes) }, 'AutoUninstallStarted recorded although the CSV is kept by policy').toEqual({ patches: [], deletes: [] });
  });

  it('a long-Failed CSV in a protected namespace: the same', async () => {
    const config = loadConfig({ OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true', PROTECTED_NAMESPACES: 'ns-a' }, allFunctions);
    const writes = await operatorUpdate(scene(), config);
    expect({ patches: operatorPatches(writes), deletes: csvDeletes(writes) }).toEqual({ patches: [], deletes: [] });
  });

  it('twin: nothing kept: the decision is recorded as olm-medic\'s own (auto), not as a user\'s request (true)', async () => {
    const writes = await operatorUpdate(scene(), autoUninstallConfig());
    expect(operatorPatches(writes)).toEqual([markerPatch('auto')]);
  });
});

describe('red team 39 A1: a recorded automatic uninstall goes on only while its evidence holds', () => {
  it('the CSV has recovered (Succeeded) and the opt-out is lifted: the record is taken back, the CSV is not deleted', async () => {
    const writes = await operatorUpdate(scene({ marker: 'auto', succeeded: true }), autoUninstallConfig());
    expect(csvDeletes(writes), 'a Succeeded CSV deleted on an hour-old automatic decision').toEqual([]);
    expect(operatorPatches(writes)).toEqual([markerPatch(null)]);
  });

  it('autoUninstall turned off since: the record is taken back, nothing deleted', async () => {
    const writes = await operatorUpdate(scene({ marker: 'auto' }), loadConfig({}, allFunctions));
    expect({ patches: operatorPatches(writes), deletes: csvDeletes(writes) }).toEqual({ patches: [markerPatch(null)], deletes: [] });
  });

  it('twin: the CSV is still long Failed: the recorded uninstall carries on (the CSV is deleted)', async () => {
    const writes = await operatorUpdate(scene({ marker: 'auto' }), autoUninstallConfig());
    expect(csvDeletes(writes)).toEqual(['delete ClusterServiceVersion ns-a/etcdoperator.v0.9.4']);
  });

  it("twin: a user's request (true) on a Succeeded CSV with no Subscription is carried out, autoUninstall or not", async () => {
    const writes = await operatorUpdate(scene({ marker: 'true', succeeded: true }), loadConfig({}, allFunctions));
    expect(csvDeletes(writes)).toEqual(['delete ClusterServiceVersion ns-a/etcdoperator.v0.9.4']);
  });
});

describe("an automatic uninstall is not started while the operator's Deployment is available (its CSV's Failed phase may be stale)", () => {
  /** The long-Failed CSV's scene with the operator's Deployment listed under the key, available or not. */
  function withDeployment(available: boolean): KubeObject[] {
    const [csv, operator] = scene();
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'etcd-operator', namespace: 'ns-a', uid: 'dep-1', resourceVersion: '30', creationTimestamp: iso(86400), labels: { 'operators.coreos.com/etcd.ns-a': '' } },
      spec: {},
      status: available
        ? { replicas: 1, availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }] }
        : { replicas: 1, availableReplicas: 0, conditions: [{ type: 'Available', status: 'False' }] },
    };
    const components = (operator!.status as { components: { refs: unknown[] } }).components;
    components.refs = [...components.refs, { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ns-a', name: 'etcd-operator' }];
    return [csv!, operator!, deployment];
  }

  it('Deployment available (the operator runs although OLM says Failed): nothing recorded, nothing deleted', async () => {
    const writes = await operatorUpdate(withDeployment(true), autoUninstallConfig());
    expect({ patches: operatorPatches(writes), deletes: once(writes.filter((w) => w.startsWith('delete'))) }).toEqual({ patches: [], deletes: [] });
  });

  it('twin: Deployment unavailable: the automatic uninstall starts', async () => {
    expect(operatorPatches(await operatorUpdate(withDeployment(false), autoUninstallConfig()))).toEqual([markerPatch('auto')]);
  });
});
