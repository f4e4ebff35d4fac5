// The browser test's harness: a real `shoal server` in a private home, the real CLI,
// headless Chromium from Debian (/usr/bin/chromium) driven by playwright-core from
// web/node_modules, and a check that nothing the test started outlives it.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SHOAL = process.env.SHOAL_BIN || path.join(REPO, 'build', 'shoal');
export const ARTIFACTS = path.join(REPO, 'tests', 'artifacts', 'browser');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export async function waitFor(condition, what, timeoutMs = 20000, intervalMs = 100) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

// Pids of processes whose environment holds NAME=value.
export function processesWithEnv(marker) {
  const needle = Buffer.from(`${marker}\0`);
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let env;
    try { env = fs.readFileSync(`/proc/${entry}/environ`); } catch { continue; }
    if (env.indexOf(needle) === 0 || env.indexOf(Buffer.concat([Buffer.from('\0'), needle])) >= 0) found.push(Number(entry));
  }
  return found;
}

export class ShoalServer {
  constructor() {
    this.home = fs.mkdtempSync(path.join(os.tmpdir(), 'shoal-browser-'));
    this.env = { ...process.env, SHOAL_HOME: this.home };
    delete this.env.SHOAL_SERVER;
    this.process = null;
    this.url = null;
  }

  async start() {
    if (!fs.existsSync(SHOAL)) throw new Error(`${SHOAL} is missing: build Shoal first (scripts/build.sh)`);
    const log = fs.openSync(path.join(this.home, 'server.out'), 'a');
    this.process = spawn(SHOAL, ['server', '--home', this.home, '--port', '0'],
      { env: this.env, stdio: ['ignore', log, log], detached: true });
    const info = path.join(this.home, 'server.json');
    await waitFor(() => fs.existsSync(info), 'the server to start', 10000);
    this.url = JSON.parse(fs.readFileSync(info, 'utf8')).url;
  }

  cli(...args) {
    const result = spawnSync(SHOAL, args, { env: this.env, encoding: 'utf8', timeout: 60000 });
    if (result.status !== 0) throw new Error(`shoal ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
    return result.stdout.trim();
  }

  // The server's token (<home>/token): calls that change state need it.
  token() {
    return fs.readFileSync(path.join(this.home, 'token'), 'utf8').trim();
  }

  async api(pathname, { method = 'GET', body } = {}) {
    const headers = { Authorization: `Bearer ${this.token()}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(this.url + pathname, {
      method, body: body === undefined ? undefined : JSON.stringify(body), headers,
    });
    const value = await response.json();
    if (!response.ok) throw new Error(`${method} ${pathname}: HTTP ${response.status} ${JSON.stringify(value)}`);
    return value;
  }

  // Kills the jobs still unfinished (a test that failed half way leaves its job
  // running), stops the server and sweeps anything left of its jobs; returns the pids
  // that were left, which only a leak leaves.
  async stop() {
    const listed = spawnSync(SHOAL, ['list', '--json', '--limit', '1000'], { env: this.env, encoding: 'utf8', timeout: 20000 });
    let jobs = [];
    try { jobs = JSON.parse(listed.stdout).jobs || []; } catch { /* no server answer: nothing to kill */ }
    for (const job of jobs.filter((j) => ['QUEUED', 'RUNNING'].includes(j.state))) {
      spawnSync(SHOAL, ['kill', job.id], { env: this.env, timeout: 60000 });
    }
    spawnSync(SHOAL, ['server', '--stop', '--home', this.home], { env: this.env, timeout: 20000 });
    if (this.process && this.process.exitCode === null) {
      try { process.kill(-this.process.pid, 'SIGTERM'); } catch { /* gone */ }
    }
    await waitFor(() => processesWithEnv(`SHOAL_HOME=${this.home}`).length === 0, 'the job processes to end', 10000)
      .catch(() => {});
    const leaked = processesWithEnv(`SHOAL_HOME=${this.home}`);
    for (const pid of leaked) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    return leaked;
  }
}

// A persistent context on a fresh profile directory (Playwright refuses --user-data-dir
// in args; this is how it takes one).
export async function launchBrowser() {
  const require = createRequire(path.join(REPO, 'web', 'package.json'));
  const { chromium } = require('playwright-core');
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shoal-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
