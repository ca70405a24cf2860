/** The root func.yaml is valid for knative func (upstream JSON schema) and implies a working start path. */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

// knative/func's schema/func_yaml-schema.json (at c18d604), kept in the repo so the test is self-contained.
// It declares draft-04; its keywords here are draft-07 compatible, so drop the marker.
const { $schema: _draft, ...schema } = JSON.parse(readFileSync(new URL('../fixtures/func_yaml-schema.json', import.meta.url), 'utf8'));
const func = parse(readFileSync(new URL('../../func.yaml', import.meta.url), 'utf8'));
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

describe('func.yaml', () => {
  it('validates against the knative/func schema (required fields and enums)', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(schema);
    const ok = validate(func);
    expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
    expect(ok).toBe(true);
  });

  it('rejects a broken copy (the schema check can fail)', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(schema);
    expect(validate({ ...func, build: { ...func.build, builder: 'docker' } })).toBe(false);
    const { created: _c, ...noCreated } = func;
    expect(validate(noCreated)).toBe(false);
  });

  it('is a TypeScript CloudEvent function with a service account, scale and resources', () => {
    expect(func).toMatchObject({ runtime: 'typescript', invoke: 'cloudevent', deploy: { serviceAccountName: 'olm-medic', options: { scale: { min: 1 } } } });
    expect(func.deploy.options.resources.limits.memory).toBeDefined();
  });

  it('runs the bundling build script at image build time, and npm start serves the bundle', () => {
    const runScripts = func.build.buildEnvs.find((e: { name: string }) => e.name === 'BP_NODE_RUN_SCRIPTS')?.value;
    expect(pkg.scripts[runScripts]).toMatch(/scripts\/build\.mjs/);
    expect(pkg.scripts.start).toMatch(/^([A-Z_]+=\S+ )*node (--[a-z-]+=\d+ )*scripts\/start\.mjs$/);
    expect(pkg.scripts.prestart).toBeUndefined(); // no rebuild (or devDependency) at container start
  });
});
