/** Test support: a Reader whose lists are fed by hand (shared-lists tests). */
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';

/** A reader whose lists are fed by hand: each list() call is one "apiserver list", recorded with the time it started. */
export function manualReader() {
  const lists: { apiVersion: string; kind: string; opts: ListOptions; startedAt: number; version(rv: string): void; push(o: KubeObject): void; end(error?: Error): void; returned: boolean }[] = [];
  let clock = 0;
  const reader: Reader = {
    async get(_ref: Ref) {
      return undefined;
    },
    list<T extends KubeObject>(apiVersion: string, kind: string, opts: ListOptions = {}): AsyncIterable<T> {
      const queue: (KubeObject | { end: true; error?: Error })[] = [];
      let wake: (() => void) | undefined;
      const rec = {
        apiVersion,
        kind,
        opts,
        startedAt: clock++,
        returned: false,
        /** The list's first page arrived, read at this collection resourceVersion. */
        version(rv: string) {
          opts.onListResourceVersion?.(rv);
        },
        push(o: KubeObject) {
          queue.push(o);
          wake?.();
        },
        end(error?: Error) {
          queue.push({ end: true, ...(error ? { error } : {}) });
          wake?.();
        },
      };
      lists.push(rec);
      return (async function* () {
        try {
          for (;;) {
            while (queue.length === 0) await new Promise<void>((r) => (wake = r));
            const x = queue.shift()!;
            if ('end' in x) {
              if (x.error) throw x.error;
              return;
            }
            yield x as T;
          }
        } finally {
          rec.returned = true;
        }
      })();
    },
  };
  return { reader, lists, now: () => clock++ };
}
