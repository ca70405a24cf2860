/** Builds CloudEvents exactly as Knative's ApiServerSource adapter sends them (knative-facts §1). */
import { CloudEvent, HTTP } from 'cloudevents';
import { randomUUID } from 'node:crypto';
import { isKnownKind, resourceFor } from '../../shared/kube/resources.js';
import type { KubeObject } from '../../shared/kube/types.js';

/** The plural the adapter puts in the subject: from the resource table, guessed for kinds outside it. */
const plural = (apiVersion: string, kind: string): string =>
  isKnownKind(apiVersion, kind) ? resourceFor(apiVersion, kind).plural : `${kind.toLowerCase()}${kind.endsWith('s') ? 'es' : 's'}`;

export function apiServerEvent(verb: 'add' | 'update' | 'delete', obj: KubeObject, source = 'https://10.96.0.1:443'): CloudEvent<KubeObject> {
  const ns = obj.metadata.namespace ?? '';
  return new CloudEvent<KubeObject>({
    specversion: '1.0',
    id: randomUUID(),
    source,
    type: `dev.knative.apiserver.resource.${verb}`,
    subject: `/apis/${obj.apiVersion}/namespaces/${ns}/${plural(obj.apiVersion, obj.kind)}/${obj.metadata.name}`,
    datacontenttype: 'application/json',
    data: obj,
    kind: obj.kind,
    name: obj.metadata.name,
    namespace: ns,
    apiversion: obj.apiVersion,
  });
}

export function pingEvent(data?: unknown): CloudEvent<unknown> {
  return new CloudEvent({
    specversion: '1.0',
    id: randomUUID(),
    source: '/apis/v1/namespaces/olm-medic/pingsources/sweep',
    type: 'dev.knative.sources.ping',
    datacontenttype: 'application/json',
    ...(data === undefined ? {} : { data }),
  });
}

/** POSTs one event in binary (default) or structured mode. */
export async function post(url: string, ev: CloudEvent<unknown>, mode: 'binary' | 'structured' = 'binary', extra: Record<string, string> = {}): Promise<Response> {
  const msg = mode === 'binary' ? HTTP.binary(ev) : HTTP.structured(ev);
  return fetch(url, { method: 'POST', headers: { ...(msg.headers as Record<string, string>), ...extra }, body: msg.body as string });
}
