/**
 * goDurationSeconds is Go's time.ParseDuration (OLM reads its unpack annotations with it). The
 * expected answers below are Go's own, printed by a throwaway program running time.ParseDuration
 * (go1.26) on each input on 2026-11-25. Red team 29b D1: "+5m", ".5h", "5.m" (and "1μs" with U+03BC)
 * are valid to OLM but were malformed to olm-medic, which then treated the namespace as one OLM does
 * not resolve and deleted a failed unpack Job inside its retry interval.
 */
import { describe, expect, it } from 'vitest';
import { goDurationSeconds } from '../../shared/olm/olm.js';

const GO: { in: string; ok: boolean; ns?: string }[] = [{"in":"0","ns":"0","ok":true},{"in":"+0","ns":"0","ok":true},{"in":"-0","ns":"0","ok":true},{"in":"00","ok":false},{"in":"","ok":false},{"in":"+","ok":false},{"in":"-","ok":false},{"in":"5m","ns":"300000000000","ok":true},{"in":"+5m","ns":"300000000000","ok":true},{"in":"-5m","ns":"-300000000000","ok":true},{"in":".5h","ns":"1800000000000","ok":true},{"in":"5.m","ns":"300000000000","ok":true},{"in":"5.","ok":false},{"in":".","ok":false},{"in":".s","ok":false},{"in":"1h30m","ns":"5400000000000","ok":true},{"in":"1.5h","ns":"5400000000000","ok":true},{"in":"1h1.5m","ns":"3690000000000","ok":true},{"in":"300ms","ns":"300000000","ok":true},{"in":"1us","ns":"1000","ok":true},{"in":"1µs","ns":"1000","ok":true},{"in":"1μs","ns":"1000","ok":true},{"in":"1ns","ns":"1","ok":true},{"in":"5","ok":false},{"in":"5mx","ok":false},{"in":"5 m","ok":false},{"in":"m","ok":false},{"in":"1d","ok":false},{"in":"2562047h","ns":"9223369200000000000","ok":true},{"in":"2562048h","ok":false},{"in":"9223372036854775807ns","ns":"9223372036854775807","ok":true},{"in":"9223372036854775808ns","ok":false},{"in":"-9223372036854775808ns","ns":"-9223372036854775808","ok":true},{"in":"1e3s","ok":false},{"in":"0.000000001s","ns":"1","ok":true},{"in":"1h0m0s","ns":"3600000000000","ok":true},{"in":"++5m","ok":false},{"in":"5m+","ok":false},{"in":"0s","ns":"0","ok":true},{"in":"-1m","ns":"-60000000000","ok":true},{"in":"1H","ok":false},{"in":"3.000000000001s","ns":"3000000000","ok":true},{"in":" 5m","ok":false},{"in":"5m ","ok":false},{"in":"1.0000000000000000001h","ns":"3600000000000","ok":true}];

describe("goDurationSeconds agrees with Go's time.ParseDuration", () => {
  it.each(GO)('%j', (c) => {
    expect(goDurationSeconds(c.in)).toBe(c.ok ? Number(BigInt(c.ns!)) / 1e9 : undefined);
  });
});
