/** Kubernetes API errors, classified once so callers never branch on raw status codes. */
/** The `details` of a metav1.Status: which object the answer is about (`kind` is the resource plural). */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  /** metav1.StatusCause, whose Type is serialised as `reason`: e.g. NamespaceLifecycle's {reason: "NamespaceTerminating"}. */
  causes?: { reason?: string; message?: string; field?: string }[];
}

export class KubeError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly retryAfterSeconds?: number,
    readonly details?: StatusDetails,
    /** The apiserver answered with a metav1 Status (not a proxy's page or a bare code). */
    readonly fromStatus = false,
  ) {
    super(message);
    this.name = 'KubeError';
  }

  /** Worth retrying: the apiserver is overloaded, failing or unreachable. */
  get transient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500 || this.status === 408;
  }

  /** A write precondition (uid or resourceVersion) failed: re-read and re-plan. */
  get conflict(): boolean {
    return this.status === 409 && this.reason !== 'AlreadyExists';
  }

  /** Any 404, including "the server could not find the requested resource" (a missing type). */
  get notFound(): boolean {
    return this.status === 404;
  }

  /**
   * Positive evidence that THIS object does not exist: a NotFound Status naming it (its resource
   * and name). A 404 for a missing resource type, a wrong path or a proxy is not evidence of anything.
   */
  isGone(resource: { group: string; plural: string }, name: string): boolean {
    const d = this.details;
    return this.status === 404 && this.reason === 'NotFound' && d?.name === name && d.kind === resource.plural && (d.group ?? '') === resource.group;
  }

  get alreadyExists(): boolean {
    return this.status === 409 && this.reason === 'AlreadyExists';
  }

  get forbidden(): boolean {
    return this.status === 403;
  }

  /**
   * The apiserver refused this write for good: admission or RBAC (403), an invalid request (400, 422),
   * a verb the resource does not allow (405). Re-sending the same write gets the same answer.
   */
  get lastingRefusal(): boolean {
    return this.status === 400 || this.status === 403 || this.status === 405 || this.status === 422;
  }

  /** NamespaceLifecycle admission refused a create: the namespace is being deleted (cause NamespaceTerminating). */
  get namespaceTerminating(): boolean {
    return this.status === 403 && Array.isArray(this.details?.causes) && this.details.causes.some((c) => c?.reason === 'NamespaceTerminating');
  }
}

/**
 * A write whose outcome is unknown: an earlier attempt got no answer (timeout, reset connection, a
 * proxy's 5xx) and may have been applied, and the retry was refused as if by a change of someone
 * else's (409 Conflict: its own write moved the resourceVersion) or found the object gone (404: its
 * own delete removed it). Only a re-read tells whether the write landed (red team 33, W1).
 */
export class WriteOutcomeUnknown extends KubeError {
  constructor(readonly refusal: KubeError) {
    super(refusal.status, refusal.reason, `an earlier attempt of this write got no answer and may have been applied; the retry got ${refusal.status} ${refusal.reason}: ${refusal.message}`, refusal.retryAfterSeconds, refusal.details, refusal.fromStatus);
    this.name = 'WriteOutcomeUnknown';
  }
}

export function isKubeError(e: unknown): e is KubeError {
  return e instanceof KubeError;
}

/** The code the kube client gives an error raised before it wrote the request. */
export const NOT_SENT = 'OLM_MEDIC_NOT_SENT';

/** Connection errors raised before a request could be written: nothing reached the apiserver. */
const NEVER_SENT = new Set([NOT_SENT, 'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ERR_INVALID_URL', 'ERR_TLS_CERT_ALTNAME_INVALID', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'CERT_HAS_EXPIRED']);

/** An error and its causes, outermost first (at most 8: a cause chain may loop). */
export function causeChain(e: unknown): { message?: unknown; code?: unknown }[] {
  const out: { message?: unknown; code?: unknown }[] = [];
  for (let c = e, depth = 0; c && typeof c === 'object' && depth < 8; c = (c as { cause?: unknown }).cause, depth++) out.push(c);
  return out;
}

/** The error codes along an error's cause chain. */
function codes(e: unknown): string[] {
  return causeChain(e).flatMap((c) => (typeof c.code === 'string' ? [c.code] : []));
}

/**
 * Network failures and timeouts: status 0, always transient. Reason `ConnectFailed` when the
 * connection was never made (the request was not sent), else `NetworkError` (it may have been).
 */
export function networkError(cause: unknown): KubeError {
  const msg = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  const neverSent = codes(cause).some((c) => NEVER_SENT.has(c));
  return new KubeError(0, neverSent ? 'ConnectFailed' : 'NetworkError', `apiserver unreachable: ${msg}`);
}

/**
 * Whether a write that failed with this (transient) error may still have been applied: the request
 * may have reached storage and its answer was lost. Not when the connection was never made, nor when
 * the apiserver answered with a Status saying why it did not store it (a failed webhook, an
 * unavailable aggregated API, API priority and fairness' 429); yes for a timeout of any kind (the
 * connection's, the apiserver's Timeout/ServerTimeout, a timed-out etcd commit) and for any 5xx that
 * is not an apiserver Status (a proxy's 502/504).
 */
export function mayHaveApplied(e: KubeError): boolean {
  if (e.status === 0) return e.reason !== 'ConnectFailed';
  if (e.status === 429) return false;
  if (!e.fromStatus) return true;
  // Admission runs before storage: a webhook that failed or timed out stored nothing (red team 36, W1).
  if (/failed calling webhook|admission webhook|failed calling plugin/i.test(e.message)) return false;
  return e.reason === 'Timeout' || e.reason === 'ServerTimeout' || /timed? ?out|timeout|deadline exceeded/i.test(e.message);
}
