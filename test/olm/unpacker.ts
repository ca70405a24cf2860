/**
 * Plays the bundle unpack pod (there is no kubelet): for each pod of an OLM unpack Job, runs the
 * command its `extract` container would run — `opm alpha bundle extract -m <bundle>/ -n <ns> -c <cm> -z`,
 * with the opm that this OLM version requires — on the local bundle directory the pod's bundle image
 * maps to (test/fixtures/olm-catalog/bundles), then marks the pod Succeeded so the real job controller
 * completes the Job. Images can be held (their pods stay Pending, so the Job fails for real at its
 * activeDeadlineSeconds) or be unknown (same).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Obj, Rest } from './rest.js';

const run = promisify(execFile);

export interface Unpacker {
  /** Pods for this bundle image are left alone until released. */
  hold(image: string): void;
  release(image: string): void;
  /** Every pod played so far: image -> configmap written. */
  played: { pod: string; namespace: string; image: string; configMap: string }[];
  errors: string[];
  stop(): Promise<void>;
}

/** registry.invalid/olm-medic/<package>-bundle:v<version> -> bundles/<package>.v<version> */
export function bundleDirFor(bundlesDir: string, image: string): string | undefined {
  const m = /^registry\.invalid\/olm-medic\/(.+)-bundle:v(.+)$/.exec(image);
  if (!m) return undefined;
  const dir = join(bundlesDir, `${m[1]}.v${m[2]}`);
  return existsSync(dir) ? dir : undefined;
}

function argAfter(args: string[], ...flags: string[]): string | undefined {
  for (let i = 0; i < args.length - 1; i++) if (flags.includes(args[i]!)) return args[i + 1];
  return undefined;
}

export function startUnpacker(opts: { rest: Rest; opm: string; kubeconfig: string; bundlesDir: string; namespaces: string[]; log?: (l: string) => void }): Unpacker {
  const held = new Set<string>();
  const done = new Set<string>();
  const played: Unpacker['played'] = [];
  const errors: string[] = [];
  let stopped = false;
  const log = opts.log ?? (() => undefined);

  const playOne = async (pod: Obj): Promise<void> => {
    const uid = pod.metadata.uid!;
    const extract = (pod.spec?.containers ?? []).find((c: { name: string }) => c.name === 'extract');
    if (!extract) return;
    const args: string[] = [...(extract.command ?? []), ...(extract.args ?? [])];
    const image: string | undefined = (extract.env ?? []).find((e: { name: string }) => e.name === 'CONTAINER_IMAGE')?.value
      ?? (pod.spec?.initContainers ?? []).find((c: { name: string }) => c.name === 'pull')?.image;
    if (!image || held.has(image)) return;
    const dir = bundleDirFor(opts.bundlesDir, image);
    if (!dir) return; // unknown image: the pod stays Pending, as an unpullable image would
    const cm = argAfter(args, '-c', '--configmapname');
    const ns = argAfter(args, '-n', '--namespace') ?? pod.metadata.namespace!;
    if (!cm) {
      errors.push(`${pod.metadata.name}: no -c in ${JSON.stringify(args)}`);
      return;
    }
    done.add(uid);
    try {
      await run(opts.opm, ['alpha', 'bundle', 'extract', '-m', `${dir}/`, '-n', ns, '-c', cm, '-z', '--kubeconfig', opts.kubeconfig], { timeout: 60_000 });
    } catch (e) {
      errors.push(`${pod.metadata.name}: opm extract failed: ${String((e as { stderr?: string }).stderr ?? e)}`);
      done.delete(uid);
      return;
    }
    const now = new Date().toISOString();
    const statuses = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c: { name: string; image: string }) => ({
      name: c.name,
      image: c.image,
      imageID: '',
      ready: false,
      restartCount: 0,
      state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now } },
    }));
    const init = new Set((pod.spec?.initContainers ?? []).map((c: { name: string }) => c.name));
    await opts.rest.mergePatch(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`, {
      status: {
        phase: 'Succeeded',
        startTime: now,
        conditions: [
          { type: 'Initialized', status: 'True', lastTransitionTime: now, reason: 'PodCompleted' },
          { type: 'Ready', status: 'False', lastTransitionTime: now, reason: 'PodCompleted' },
          { type: 'ContainersReady', status: 'False', lastTransitionTime: now, reason: 'PodCompleted' },
        ],
        initContainerStatuses: statuses.filter((s) => init.has(s.name)),
        containerStatuses: statuses.filter((s) => !init.has(s.name)),
      },
    });
    played.push({ pod: pod.metadata.name, namespace: pod.metadata.namespace!, image, configMap: cm });
    log(`[unpacker] ${pod.metadata.namespace}/${pod.metadata.name}: extracted ${image} into configmap ${cm}`);
  };

  const loop = (async () => {
    while (!stopped) {
      for (const ns of opts.namespaces) {
        try {
          const pods = await opts.rest.list<Obj>(`/api/v1/namespaces/${ns}/pods?labelSelector=job-name`);
          for (const pod of pods) {
            if (stopped) break;
            if (done.has(pod.metadata.uid!) || pod.metadata.deletionTimestamp) continue;
            if (['Succeeded', 'Failed'].includes(pod.status?.phase)) continue;
            await playOne(pod);
          }
        } catch (e) {
          if (!stopped) errors.push(String(e));
        }
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  })();

  return {
    hold: (image) => held.add(image),
    release: (image) => held.delete(image),
    played,
    errors,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
