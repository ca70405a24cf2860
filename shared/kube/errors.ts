/** Kubernetes API errors, classified once so callers never branch on raw status codes. */
export class KubeError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly retryAfterSeconds?: number,
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

  get notFound(): boolean {
    return this.status === 404;
  }

  get alreadyExists(): boolean {
    return this.status === 409 && this.reason === 'AlreadyExists';
  }

  get forbidden(): boolean {
    return this.status === 403;
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
