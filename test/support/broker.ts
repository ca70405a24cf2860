/**
 * Delivers CloudEvents the way a Knative Broker does: POST (binary mode), and redeliver any
 * non-2xx answer (or a connection error) with exponential backoff, a bounded number of times.
 * Every answer is recorded, so suites can assert on the status codes a Broker would have seen.
 */
import type { CloudEvent } from 'cloudevents';
import { post } from './events.js';

export interface BrokerOptions {
  attempts?: number;
  backoffMs?: number;
  maxBackoffMs?: number;
}

export interface Answer {
  url: string;
  eventId: string;
  type: string;
  subject?: string;
  attempt: number;
  /** 0: connection error. */
  status: number;
  body: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class Broker {
  readonly answers: Answer[] = [];
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(opts: BrokerOptions = {}) {
    this.attempts = opts.attempts ?? 8;
    this.backoffMs = opts.backoffMs ?? 200;
    this.maxBackoffMs = opts.maxBackoffMs ?? 2_000;
  }

  /** Delivers `ev` to `url`; resolves with the last answer's status (2xx when delivered). */
  async deliver(url: string, ev: CloudEvent<unknown>): Promise<number> {
    let status = 0;
    for (let attempt = 0; attempt < this.attempts; attempt++) {
      let body = '';
      try {
        const res = await post(url, ev);
        status = res.status;
        body = await res.text();
      } catch (e) {
        status = 0;
        body = e instanceof Error ? e.message : String(e);
      }
      this.answers.push({ url, eventId: ev.id, type: ev.type, ...(ev.subject ? { subject: ev.subject } : {}), attempt, status, body });
      if (status >= 200 && status < 300) return status;
      await sleep(Math.min(this.maxBackoffMs, this.backoffMs * 2 ** attempt));
    }
    return status;
  }

  /** Delivers `events` one after another (the order matters to a single sender). */
  async deliverAll(url: string, events: CloudEvent<unknown>[]): Promise<number[]> {
    const out: number[] = [];
    for (const ev of events) out.push(await this.deliver(url, ev));
    return out;
  }

  /** Histogram of every answer's status code. */
  histogram(): Record<string, number> {
    const h: Record<string, number> = {};
    for (const a of this.answers) h[a.status] = (h[a.status] ?? 0) + 1;
    return h;
  }

  failures(): Answer[] {
    return this.answers.filter((a) => a.status < 200 || a.status >= 300);
  }
}
