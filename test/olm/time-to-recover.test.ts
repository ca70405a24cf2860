/**
 * The measurement behind `npm run bench`'s "time to recover" (bench/time-to-recover.ts runs this file
 * with OLM_MEDIC_TIME_TO_RECOVER=<rows.jsonl>; `npm test` skips it): on real OLM, from the moment a
 * seed situation's fault happens to the moment every affected install's CSV is Succeeded, once with
 * OLM alone and once with olm-medic deployed (server + Knative's real adapter, as the shipped
 * ServiceAccounts, running before the fault), per OLM version of the run. OLM alone is cut off at
 * OLM_MEDIC_TIME_TO_RECOVER_BOUND_SECONDS (default 420: past v0.43+'s 300 s TTL on failed unpack Jobs) and reported as not recovered.
 *   failed-unpack-job: a shared unpack Job failed (scenes.failedSharedJob: the bundle image unpullable
 *     for 30 s after a first namespace subscribed, past the Job's 10 s deadline); the fault is the moment
 *     the image is back and a second namespace subscribes; recovered = both namespaces Succeeded.
 *   catalog-node-lost: the fault is the registry pod's Node ceasing to heartbeat (scenes.doomedNode);
 *     once the catalog is down (~50 s later: Node NotReady, pod evicted) a namespace subscribes from
 *     it; recovered = its CSV Succeeded (so ~50 s is the floor for both).
 */
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { csvPhase, forgetInstalls, namespace, startOlm, subscribe, type OlmBed } from './bed.js';
import { failedSharedJob, doomedNode, REGISTRY, registryCatalogOn, registryState, removeRegistryCatalog } from './scenes.js';
import { until } from './procs.js';
import { runVersions, startMedic, type Medic } from './support.js';

const out = process.env.OLM_MEDIC_TIME_TO_RECOVER;
const BOUND = Number(process.env.OLM_MEDIC_TIME_TO_RECOVER_BOUND_SECONDS ?? 420);
const SITUATIONS = (process.env.OLM_MEDIC_TIME_TO_RECOVER_SITUATIONS ?? 'failed-unpack-job,catalog-node-lost').split(',').filter(Boolean);
const MODES = ['olm-alone', 'olm-medic'] as const;

export interface RecoveryRow {
  situation: string;
  version: string;
  mode: (typeof MODES)[number];
  /** Seconds from the fault to recovery; null: not recovered within boundSeconds. */
  seconds: number | null;
  boundSeconds: number;
}

if (!out) it.skip('measured by `npm run bench` (bench/time-to-recover.ts sets OLM_MEDIC_TIME_TO_RECOVER)', () => {});
const versions = out ? runVersions(['v0.25.0', 'v0.28.0', 'v0.46.0']) : [];

/** Seconds until every CSV is Succeeded, or null at the bound. */
async function recovered(olm: OlmBed, t0: number, csvs: [string, string][]): Promise<number | null> {
  while (Date.now() - t0 < BOUND * 1000) {
    let all = true;
    for (const [ns, name] of csvs) if ((await csvPhase(olm.admin, ns, name)) !== 'Succeeded') all = false;
    if (all) return Math.round((Date.now() - t0) / 100) / 10;
    await new Promise((r) => setTimeout(r, 250));
  }
  return null;
}

const CSV = 'medic-beta.v0.1.0';
const scenes: Record<string, (olm: OlmBed, made: string[]) => Promise<{ t0: number; csvs: [string, string][]; after(): Promise<void> }>> = {
  async 'failed-unpack-job'(olm, made) {
    // The same scene with and without olm-medic: the image unpullable for 30 s (past the 10 s deadline).
    const scene = await failedSharedJob(olm, made, { settleSeconds: 30 });
    const t0 = Date.now();
    const ns2 = await scene.fault();
    return { t0, csvs: [[scene.ns1, CSV], [ns2, CSV]], after: async () => {} };
  },
  async 'catalog-node-lost'(olm, made) {
    const node = await doomedNode(olm);
    const name = `${REGISTRY}-${Math.random().toString(36).slice(2, 7)}`;
    const after = async (): Promise<void> => {
      await node.remove(); // PodGC then removes a dead pod left on it
      await removeRegistryCatalog(olm, name);
    };
    try {
      await registryCatalogOn(olm, node.name, name);
      const ns = await namespace(olm.admin, 'catnode');
      made.push(ns);
      const t0 = Date.now();
      await node.kill();
      // Users notice once the catalog is down (the Node NotReady, the pod evicted): then they subscribe.
      await until(async () => (await registryState(olm, name)) !== 'READY', `CatalogSource ${name} down`, 180_000, olm.procs());
      await subscribe(olm.admin, ns, 'medic-beta', { source: name });
      return { t0, csvs: [[ns, CSV]], after };
    } catch (e) {
      await after();
      throw e;
    }
  },
};

describe.each(versions)('time to recover on real OLM %s', (version) => {
  let olm: OlmBed;
  beforeAll(async () => {
    olm = await startOlm(version, { serviceProxy: true });
  });
  afterAll(async () => {
    await olm?.stop();
  });

  for (const situation of SITUATIONS) {
    for (const mode of MODES) {
      it(`${situation}, ${mode}`, { timeout: BOUND * 1000 + 600_000 }, async () => {
        const made: string[] = [];
        let medic: Medic | undefined;
        if (mode === 'olm-medic') medic = await startMedic();
        let after = async (): Promise<void> => {};
        try {
          const s = await scenes[situation]!(olm, made);
          after = s.after;
          const seconds = await recovered(olm, s.t0, s.csvs);
          const row: RecoveryRow = { situation, version, mode, seconds, boundSeconds: BOUND };
          appendFileSync(out!, `${JSON.stringify(row)}\n`);
          process.stderr.write(`[time-to-recover] ${JSON.stringify(row)}\n`);
        } finally {
          // Leave a fresh cluster for the next measurement (v0.25 CSVs carry olm-medic's finalizer: forget
          // them while it still runs).
          await after();
          await forgetInstalls(olm.admin, made);
          await medic?.stop();
        }
      });
    }
  }
});
