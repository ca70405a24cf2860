// Fails fast, with the fix, when npm scripts are not running on Node >= 22.19 (the registry's
// `node` devDependency provides Node 24 in node_modules/.bin, which npm puts first on PATH).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(`olm-medic needs Node >= 22.19 (Node 24 LTS); this is ${process.version} at ${process.execPath}.\nRun \`npm ci\` first: it installs Node 24 as a devDependency and npm scripts use it.`);
  process.exit(1);
}
console.log(`[olm-medic] Node ${process.version} (${process.execPath})`);
