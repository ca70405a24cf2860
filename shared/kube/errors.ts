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
    super(refusal.status, refusal.reason, `an earlier attempt of this write got no answer and may have been applied; the retry got ${refusal.status} ${refusal.reason}: ${refusal.message}`, refusal.retryAfterSeconds, refusal.details);
    this.name = 'WriteOutcomeUnknown';
  }
}

export function isKubeError(e: unknown): e is KubeError {
  return e instanceof KubeError;
}

/** Network failures and timeouts: status 0, always transient. */
export function networkError(cause: unknown): KubeError {
  const msg = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  return new KubeError(0, 'NetworkError', `apiserver unreachable: ${msg}`);
}
