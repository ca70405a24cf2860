/** The Containerfile: Node 24 LTS (the version the tests run on), non-root, npm start's command, no devDependencies at run time. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startCommand } from '../../scripts/start-command.mjs';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string>; devDependencies: Record<string, string> };
const containerfile = readFileSync('Containerfile', 'utf8');

/** Problems with a Containerfile's final stage (empty = fine). */
export function problems(text: string): string[] {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const stages = lines.reduce<string[][]>((acc, l) => (l.startsWith('FROM ') ? [...acc, [l]] : (acc[acc.length - 1]!.push(l), acc)), []);
  const final = stages[stages.length - 1] ?? [];
  const out: string[] = [];
  const from = /^FROM node:(\d+)\.(\d+)\.(\d+)-\S+$/.exec(final[0] ?? '');
  if (!from) out.push(`final stage is not a pinned node image: ${final[0]}`);
  else if (`${from[1]}.${from[2]}.${from[3]}` !== pkg.devDependencies.node || from[1] !== '24') out.push(`node ${from.slice(1).join('.')} is not Node 24 LTS as tested (${pkg.devDependencies.node})`);
  const users = final.filter((l) => l.startsWith('USER '));
  const user = users[users.length - 1]?.slice(5).split(':')[0];
  if (!user || !/^[1-9]\d*$/.test(user)) out.push(`final USER must be a numeric non-root uid, got ${user ?? 'none'}`);
  const cmd = final.filter((l) => l.startsWith('CMD ') || l.startsWith('ENTRYPOINT '));
  const { env, args } = startCommand('.');
  const start = ['node', ...args];
  // npm start's leading NAME=value assignments must be the image's environment too.
  for (const e of Object.entries(env).map(([k, v]) => `${k}=${v}`)) if (!final.some((l) => l === `ENV ${e}`)) out.push(`npm start sets ${e}: the final stage must too (ENV ${e})`);
  if (cmd.length !== 1 || !cmd[0]!.startsWith('CMD ') || JSON.stringify(JSON.parse(cmd[0]!.slice(4))) !== JSON.stringify(start)) out.push(`CMD must be npm start's command ${JSON.stringify(start)} in exec form, got ${cmd.join(' | ')}`);
  const installs = final.filter((l) => /\bnpm (ci|install|i)\b/.test(l));
  if (installs.length === 0 || installs.some((l) => !l.includes('--omit=dev'))) out.push(`the final stage must install with --omit=dev: ${installs.join(' | ')}`);
  if (final.some((l) => /^COPY\b.*node_modules/.test(l) || /^COPY \.\s/.test(l))) out.push('the final stage copies node_modules or the whole context (devDependencies)');
  return out;
}

describe('Containerfile', () => {
  it('runs npm start\'s command on Node 24 LTS as a non-root user with production dependencies only', () => {
    expect(problems(containerfile)).toEqual([]);
  });

  it('the check fails on a root user, another command, dev dependencies or another Node', () => {
    const variants = {
      root: containerfile.replace('USER 1000:1000', 'USER root'),
      'no user': containerfile.replace('USER 1000:1000', ''),
      npm: containerfile.replace(/^CMD .*$/m, 'CMD ["npm", "start"]'),
      dev: containerfile.replace('npm ci --omit=dev', 'npm ci'),
      'copied node_modules': containerfile.replace('COPY --from=build /app/dist ./dist', 'COPY --from=build /app/node_modules ./node_modules'),
      'node 22': containerfile.replaceAll('node:24.21.0', 'node:22.19.0'),
      'no malloc env': containerfile.replace(/^ENV MALLOC_MMAP_THRESHOLD_=.*$/m, ''),
    };
    for (const [name, text] of Object.entries(variants)) expect(problems(text), name).not.toEqual([]);
  });
});
