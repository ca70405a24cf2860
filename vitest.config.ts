import { defineConfig } from 'vitest/config';

/**
 * Real OLM (built by test/control-plane/build-olm.sh) on its own control plane with a scheduler and
 * kwok; one OLM at a time, so files run one after another. Run by `npm run test:olm`, which `npm test`
 * runs after everything else (a second vitest run: vitest starts every project's global setup before
 * any test, and this bed's build and control plane must not load the timing-sensitive suites).
 */
const olmProject = {
  test: {
    name: 'olm',
    include: ['test/olm/**/*.test.ts'],
    globalSetup: ['test/olm/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    maxWorkers: 1,
    sequence: { groupOrder: 3 },
  },
};

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { test: { name: 'http', include: ['test/http/**/*.test.ts'] } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // One real control plane (etcd + kube-apiserver + kube-controller-manager) for the run.
          globalSetup: ['test/control-plane/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Files share the control plane; each test works in its own namespaces.
          fileParallelism: true,
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          // Its own control plane: Knative's real adapter watches the whole cluster, so the server it
          // feeds would otherwise act on other suites' objects (twins that must stay untouched).
          globalSetup: ['test/control-plane/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'reliability',
          include: ['test/reliability/**/*.test.ts'],
          // Its own real control plane; suites run one at a time (they count writes in the audit log).
          globalSetup: ['test/control-plane/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          maxWorkers: 1,
          // After unit/http/integration (group 0), not alongside them: 2 cores, timing-sensitive suites.
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          name: 'bench',
          include: ['test/bench/**/*.test.ts'],
          // `npm run bench:smoke` (its own control planes): last and alone, after the timing-sensitive suites.
          // 60 min: on a cold machine its time-to-recover smoke builds the real-OLM bed first (~20 min).
          testTimeout: 3_600_000,
          fileParallelism: false,
          maxWorkers: 1,
          sequence: { groupOrder: 4 },
        },
      },
      ...(process.env.OLM_MEDIC_OLM_SUITES === '1' ? [olmProject] : []),
    ],
  },
});
