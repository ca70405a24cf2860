// Build-time stand-in for `undici` in the server bundle (scripts/build.mjs aliases it; undici
// itself is bundled apart into dist/undici.cjs): the same names, but undici's 1.3 MB of CommonJS
// is read and evaluated on first use only — in the server, the first apiserver request through a
// proxy (shared/kube/client.ts reaches any other cluster over node:https): never, usually. Only
// what the bundle uses is forwarded: Agent and ProxyAgent (@kubernetes/client-node's KubeConfig)
// and fetch (shared/kube/client.ts).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

let undici;
function load() {
  if (undici) return undici;
  // This code lands in dist/server.mjs or in dist/chunks/*.mjs: undici.cjs is next to it or one up.
  const here = new URL('.', import.meta.url);
  const file = [new URL('undici.cjs', here), new URL('../undici.cjs', here)].find((u) => existsSync(u));
  if (!file) throw new Error(`dist/undici.cjs not found next to ${import.meta.url}: run npm run build`);
  undici = createRequire(import.meta.url)(file.pathname);
  return undici;
}

export function fetch(...args) {
  return load().fetch(...args);
}
export class Agent {
  constructor(...args) {
    return new (load().Agent)(...args);
  }
}
export class ProxyAgent {
  constructor(...args) {
    return new (load().ProxyAgent)(...args);
  }
}
