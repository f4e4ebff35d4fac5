// The web UI end to end, in a real browser: a real server and a real 2-worker job
// submitted with the real CLI; the jobs page, the job page with both containers, their
// logs, moving progress and charts, Save Model, Kill; and markup from the job (command,
// log lines, a metric name, a job name) shown as text with nothing of it run.
// Run: node --test tests/browser/   (scripts/test.sh does). Screenshots: tests/artifacts/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, ShoalServer, launchBrowser, processesWithEnv, waitFor } from './harness.mjs';

const XSS_LOG = '<script>window.__xss=1</script>';
const XSS_IMG = '<img src=x onerror="window.__xss=1">';
const XSS_NAME = '<img src=x onerror=alert(1)>';

// 2 workers, ~30 s (killed before): a progress line, a metric line and a log line
// carrying markup every second.
const JOB = `name: web-ui-test
outputs: [{name: model, uri: out}]
roles:
  worker:
    instances: 2
    cpus: 0.1
    memory: 64M
    command: >-
      echo '${XSS_IMG}';
      for i in $(seq 1 30); do
      echo "step $i ${XSS_LOG}";
      echo "reporter progress:$(awk "BEGIN{print $i/30}")" >&2;
      echo "reporter metric: loss=$(awk "BEGIN{print 1/$i}") step=$i" >&2;
      sleep 1; done
`;

let server;
let browser;
let page;
const dialogs = [];
const pageErrors = [];

async function shot(name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

// Copies job-1's row of the history under a name the spec parser would refuse, as a
// job imported from elsewhere could carry: the page must still show it as text.
function insertJobNamed(name) {
  const script = `
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
summary, detail = db.execute("SELECT summary, detail FROM jobs WHERE seq=1").fetchone()
summary, detail = json.loads(summary), json.loads(detail)
for v in (summary, detail):
    v.update(name=sys.argv[2], state="FAILED", message=sys.argv[2], finished_ms=v["created_ms"] + 1000)
detail["spec"]["name"] = sys.argv[2]
cur = db.execute("INSERT INTO jobs(name, user, framework, state, created_ms, summary, detail) VALUES(?,?,?,?,?,?,?)",
                 (sys.argv[2], summary["user"], summary["framework"], "FAILED", summary["created_ms"], "{}", "{}"))
seq = cur.lastrowid
for v in (summary, detail):
    v["id"] = "job-%d" % seq
db.execute("UPDATE jobs SET summary=?, detail=? WHERE seq=?", (json.dumps(summary), json.dumps(detail), seq))
db.commit()
print("job-%d" % seq)
`;
  const result = spawnSync('/usr/bin/python3', ['-c', script, path.join(server.home, 'shoal.db'), name], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}

before(async () => {
  server = new ShoalServer();
  await server.start();
  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.on('dialog', (dialog) => { dialogs.push(dialog.message()); dialog.dismiss().catch(() => {}); });
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => { if (message.type() !== 'log') console.log(`page ${message.type()}: ${message.text()}`); });
});

after(async () => {
  if (browser) await browser.close();
  const leaked = server ? await server.stop() : [];
  assert.deepEqual(leaked, [], 'processes left running after the test');
  if (server && !process.env.KEEP_HOME) fs.rmSync(server.home, { recursive: true, force: true });
});

test('the web UI follows, saves and kills a real job, showing job output as text', { timeout: 120000 }, async () => {
  const spec = path.join(server.home, 'job.yaml');
  fs.writeFileSync(spec, JOB);
  const id = server.cli('submit', spec);
  assert.equal(id, 'job-1');
  const oddId = insertJobNamed(XSS_NAME);

  // The jobs page lists both jobs; the odd name is text.
  await page.goto(server.url + '/');
  await page.locator(`tr[data-job="${id}"]`).waitFor();
  await page.locator(`tr[data-job="${oddId}"]`).getByText(XSS_NAME, { exact: true }).waitFor();
  assert.match(await page.locator('#jobs-status').textContent(), /of 2 jobs/);
  await page.selectOption('select[name=state]', 'FAILED');
  await waitFor(async () => (await page.locator('#jobs tbody tr').count()) === 1, 'the state filter');
  await page.selectOption('select[name=state]', '');
  await page.locator(`tr[data-job="${id}"]`).waitFor();
  await shot('1-jobs-page');

  // The job page: both containers with their hosts, and a log followed live.
  await page.locator(`tr[data-job="${id}"] a`).first().click();
  await page.waitForURL(`**/jobs/${id}`);
  const rows = page.locator('#containers tbody tr');
  await waitFor(async () => (await rows.count()) === 2, 'both containers in the table');
  for (const index of [0, 1]) {
    const row = page.locator(`#containers tr[data-task="worker-${index}"]`);
    await waitFor(async () => /127\.0\.0\.1/.test(await row.textContent()), `worker ${index}'s host`);
  }
  const log = page.locator('#log-text');
  await waitFor(async () => (await log.textContent()).includes(XSS_LOG), 'worker 0\'s log with the markup line as text');
  assert.ok((await log.textContent()).includes(XSS_IMG));
  assert.equal(await page.locator('#log-text *').count(), 0, 'the log holds no elements');
  await page.locator('#log-tabs button[data-task="worker-1"]').click();
  await waitFor(async () => /step \d+/.test(await log.textContent()), 'worker 1\'s log');

  // Progress moves.
  const progress = async () => Number((await page.locator('#job-header .progress-text').textContent()).replace('%', ''));
  const first = await waitFor(async () => { const p = await progress(); return p > 0 && p < 90 && p; }, 'progress above 0');
  await waitFor(async () => (await progress()) >= first + 5, 'progress to move', 20000);

  // Charts: resources sampled by the containers and the program's metric, with a
  // metric name carrying markup posted as the AM would.
  for (const chart of ['resource:cpu', 'resource:rss', 'resource:progress', 'metric:loss']) {
    await page.locator(`figure[data-chart="${chart}"]`).waitFor({ timeout: 20000 });
  }
  await page.locator('figure[data-chart="metric:loss"]').waitFor({ timeout: 20000 });
  const detail = await server.api(`/api/v1/jobs/${id}`);
  const attempt = detail.attempts.at(-1);
  await server.api(`/internal/v1/jobs/${id}/attempts/${attempt.number}/report`, {
    method: 'POST',
    body: { state: attempt.state, message: attempt.message, am_addr: attempt.am_addr, tasks: attempt.tasks,
      series: [{ role: 'worker', index: 0, metrics: [{ t: Date.now(), step: 1, name: XSS_IMG, value: 1 }] }] },
  });
  await page.locator('figure.chart figcaption').getByText(XSS_IMG, { exact: true }).waitFor({ timeout: 10000 });

  // Search the log.
  await page.fill('#log-query', 'STEP 3 ');
  await page.click('.log-search button[type=submit]');
  await page.locator('#log-matches li code').first().waitFor();
  assert.match(await page.locator('#log-matches').textContent(), /step 3 </);
  await shot('2-job-running');

  // Save Model changes state, so it needs a token: the page asks for it (the server's
  // token, as its owner would paste it) and reloads with it; then the request is listed.
  await page.click('#save-model');
  const banner = page.locator('#token-banner');
  await banner.locator('input[type=password]').waitFor();
  assert.equal((await server.api(`/api/v1/jobs/${id}`)).saved_models.length, 0, 'nothing saved without the token');
  await banner.locator('input[type=password]').fill(server.token());
  await Promise.all([page.waitForEvent('load'), banner.locator('button[type=submit]').click()]);
  await page.locator('#save-model').waitFor();
  await waitFor(async () => (await rows.count()) === 2, 'the containers after the reload');
  await page.click('#save-model');
  await page.locator('#saved-models li[data-model]').first().waitFor();
  assert.match(await page.locator('#saved-models').textContent(), /requested|uploading|saved/);
  assert.match(await page.locator('#notice').textContent(), /it commits to \S*out\/saved-\d{8}-\d{6}\//, 'the folders a save commits to');
  const saved = (await server.api(`/api/v1/jobs/${id}`)).saved_models;
  assert.equal(saved.length, 1);
  assert.ok(['requested', 'uploading', 'saved'].includes(saved[0].state), saved[0].state);

  // Kill (two clicks, no dialog) and see the job killed.
  await page.click('#kill');
  await page.click('#kill');
  await page.locator('#job-header .state').getByText('KILLED', { exact: true }).waitFor({ timeout: 30000 });
  await shot('3-job-killed');
  assert.equal((await server.api(`/api/v1/jobs/${id}`)).state, 'KILLED');

  // After the end the page still shows everything.
  await page.reload();
  await waitFor(async () => (await rows.count()) === 2, 'the containers after the end');
  await waitFor(async () => (await log.textContent()).includes(XSS_LOG), 'the log after the end');
  await new Promise((resolve) => setTimeout(resolve, 1500));  // time for any second copy to arrive
  assert.equal((await log.textContent()).split(XSS_IMG).length - 1, 1, 'the ended job\'s log is shown once');
  // The attempt's application master has a log tab of its own.
  await page.locator('#log-tabs button[data-task="am-0"]').click();
  await waitFor(async () => /serving containers at/.test(await log.textContent()), 'the application master\'s log');
  await page.locator('#saved-models li[data-model]').first().waitFor();
  await page.locator('figure[data-chart="metric:loss"]').waitFor();

  // The odd job's page shows its name as text.
  await page.goto(`${server.url}/jobs/${oddId}`);
  await page.locator('#job-header .job-name').getByText(XSS_NAME, { exact: true }).waitFor();
  assert.ok((await page.locator('#job-info').textContent()).includes(XSS_IMG), 'the command, as text');
  await shot('4-odd-job');

  // Nothing of the markup ran.
  assert.equal(await page.evaluate(() => window.__xss), undefined, 'no injected handler ran');
  assert.deepEqual(dialogs, [], 'no dialog opened');
  assert.deepEqual(pageErrors, [], 'no script error on the page');
});

// Copies of job-1's history row, `count` of them, named bulk-<n> and owned by ann (even n)
// or bob (odd n): a history long enough to page through.
function insertBulkJobs(count) {
  const script = `
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
summary, detail = (json.loads(v) for v in db.execute("SELECT summary, detail FROM jobs WHERE seq=1").fetchone())
for n in range(int(sys.argv[2])):
    name, user = "bulk-%d" % n, ("ann" if n % 2 == 0 else "bob")
    cur = db.execute("INSERT INTO jobs(name, user, framework, state, created_ms, summary, detail) VALUES(?,?,?,?,?,?,?)",
                     (name, user, summary["framework"], "SUCCEEDED", summary["created_ms"] + n, "{}", "{}"))
    for v in (summary, detail):
        v.update(id="job-%d" % cur.lastrowid, name=name, user=user, state="SUCCEEDED", created_ms=summary["created_ms"] + n)
    detail["spec"]["name"] = name
    db.execute("UPDATE jobs SET summary=?, detail=? WHERE seq=?", (json.dumps(summary), json.dumps(detail), cur.lastrowid))
db.commit()
`;
  const result = spawnSync('/usr/bin/python3', ['-c', script, path.join(server.home, 'shoal.db'), String(count)], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
}

test('the jobs page filters by user and name and pages the history; a job page downloads its log and links its board',
  { timeout: 120000 }, async () => {
    insertBulkJobs(55);
    const status = page.locator('#jobs-status');
    // Waits until the pager says `text`; a failure shows what it said instead.
    const pagerSays = async (text, what) => waitFor(async () => (await status.textContent()) === text, what)
      .catch(async (error) => {
        const listed = await server.api(`/api/v1/jobs?${new URL(page.url()).searchParams}`).catch((e) => e.message);
        throw new Error(`${error.message}; the pager says '${await status.textContent()}' at ${page.url()}; ` +
          `the API lists ${JSON.stringify(listed).slice(0, 300)}`);
      });
    const older = page.locator('.pager button', { hasText: 'Older' });
    const newer = page.locator('.pager button', { hasText: 'Newer' });

    // 50 a page: the name filter keeps the 55 copies, the second page has the last 5.
    await page.goto(`${server.url}/?name=bulk-`);
    await pagerSays('1–50 of 55 jobs', 'the first page of 55');
    assert.equal(await page.locator('#jobs tbody tr').count(), 50);
    assert.ok(await newer.isDisabled(), 'no newer page before the first');
    await older.click();
    await pagerSays('51–55 of 55 jobs', 'the second page');
    assert.equal(await page.locator('#jobs tbody tr').count(), 5);
    assert.ok(await older.isDisabled(), 'no older page after the last');
    assert.match(page.url(), /offset=50/, 'the page lives in the URL');

    // User and name together: ann's bulk-1x jobs are bulk-10, 12, 14, 16 and 18.
    await page.fill('input[name=user]', 'ann');
    await page.fill('input[name=name]', 'bulk-1');
    await page.click('form.filters button[type=submit]');
    await pagerSays('1–5 of 5 jobs', 'the user and name filters');
    const names = await page.locator('#jobs tbody tr td:nth-child(2)').allTextContents();
    assert.deepEqual([...names].sort(), ['bulk-10', 'bulk-12', 'bulk-14', 'bulk-16', 'bulk-18']);
    await page.reload();
    await pagerSays('1–5 of 5 jobs', 'the filters kept across a reload');

    // The log downloads whole, as the file the API serves.
    await page.goto(`${server.url}/jobs/job-1`);
    await waitFor(async () => (await page.locator('#log-text').textContent()).includes('step 1 '), 'job-1\'s log');
    const [file] = await Promise.all([page.waitForEvent('download'), page.click('#log-download')]);
    const downloaded = fs.readFileSync(await file.path(), 'utf8');
    const raw = await (await fetch(`${server.url}/api/v1/jobs/job-1/logs/raw?role=worker&index=0`,
      { headers: { Authorization: `Bearer ${server.token()}` } })).text();
    assert.equal(downloaded, raw, 'the downloaded log is the task\'s whole log');
    assert.ok(downloaded.includes(XSS_LOG));

    // A board's link appears with its job and opens the board.
    const spec = path.join(server.home, 'board.yaml');
    fs.writeFileSync(spec, `name: with-board
board: {command: "/usr/bin/python3 -m http.server $SHOAL_BOARD_PORT --bind 127.0.0.1"}
roles:
  worker: {cpus: 0.1, memory: 64M, command: "sleep 120"}
`);
    const id = server.cli('submit', spec);
    await page.goto(`${server.url}/jobs/${id}`);
    const board = page.locator('#board-link');
    await waitFor(async () => await board.isVisible(), 'the board link', 30000);
    const href = await board.getAttribute('href');
    assert.equal(href, (await server.api(`/api/v1/jobs/${id}`)).board_url);
    await waitFor(async () => (await fetch(href).catch(() => ({ ok: false }))).ok, 'the board to answer', 30000);
    server.cli('kill', id);
    await shot('5-paged-and-board');
    assert.deepEqual(pageErrors, [], 'no script error on the page');
  });

test('the jobs page shows the queues and why a queued job waits; its page says so too', { timeout: 60000 }, async () => {
  const { capacity } = await server.api('/api/v1/queues');
  const release = path.join(server.home, 'release-holder');
  const spec = (name, cpus, command) => {
    const file = path.join(server.home, `${name}.yaml`);
    fs.writeFileSync(file, `name: ${name}\nroles:\n  worker:\n    cpus: ${cpus}\n    memory: 32M\n    command: ${command}\n`);
    return file;
  };
  const holder = server.cli('submit', spec('holder', capacity.cpus, `while [ ! -e ${release} ]; do sleep 0.1; done`));
  await waitFor(async () => (await server.api(`/api/v1/jobs/${holder}`)).state === 'RUNNING', 'the holder to run', 20000);
  const queued = server.cli('submit', spec('queued', 1, 'true'), '--priority', 'high');
  await waitFor(async () => (await server.api(`/api/v1/jobs/${queued}`)).wait_reason, 'the queued job\'s reason', 10000);

  await page.goto(server.url + '/');
  const queueRow = page.locator('#queues tr[data-queue="default"]');
  await waitFor(async () => /100% of 100%/.test(await queueRow.textContent()), 'the default queue using the whole cluster');
  const reason = page.locator(`tr[data-job="${queued}"] .wait-reason`);
  await reason.waitFor();
  assert.match(await reason.textContent(), /^needs 1 CPU \(none free\); .*first in queue default/);
  assert.match(await page.locator(`tr[data-job="${queued}"]`).textContent(), /default/);
  await shot('5-queued-job');

  await page.goto(`${server.url}/jobs/${queued}`);
  await waitFor(async () => /^Waiting: needs 1 CPU \(none free\)/.test(await page.locator('#wait-reason').textContent()),
    'the reason on the job page');
  assert.match(await page.locator('#job-info').textContent(), /Queuedefault.*Priority100/s);

  fs.writeFileSync(release, '');
  await page.locator('#job-header .state').getByText('SUCCEEDED', { exact: true }).waitFor({ timeout: 30000 });
  assert.equal(await page.locator('#wait-reason').isHidden(), true, 'a job that ran waits no more');
  assert.deepEqual(pageErrors, [], 'no script error on the page');
});

// research is guaranteed half the cluster and runs a job of a quarter; its next job, of
// half, would take it beyond its guarantee while a default job borrows the rest: research
// is held back by the size of its jobs and gains credit, which the queues table shows. (The
// threshold of an hour keeps it from spending the credit during the test.)
test('the queues table shows the credit of a queue held below its guarantee by the size of its jobs', { timeout: 60000 }, async () => {
  const queuesFile = path.join(server.home, 'queues.yaml');
  fs.writeFileSync(queuesFile, 'min_run_before_preemption: 1h\nqueues:\n  research: {guarantee: 50%}\n');
  const release = path.join(server.home, 'release-credit');
  try {
    await waitFor(async () => (await server.api('/api/v1/queues')).queues.some((q) => q.name === 'research'),
      'the server to load queues.yaml');
    const { capacity } = await server.api('/api/v1/queues');
    const hold = (name, cpus, queue) => {
      const file = path.join(server.home, `${name}.yaml`);
      fs.writeFileSync(file, `name: ${name}\nqueue: ${queue}\nroles:\n  worker:\n    cpus: ${cpus}\n    memory: 32M\n` +
        `    command: while [ ! -e ${release} ]; do sleep 0.1; done\n`);
      return server.cli('submit', file);
    };
    const running = async (id) => (await server.api(`/api/v1/jobs/${id}`)).state === 'RUNNING';
    const borrower = hold('borrower', capacity.cpus * 0.75, 'default');
    await waitFor(() => running(borrower), 'the default job to run', 20000);
    const first = hold('first', capacity.cpus * 0.25, 'research');
    await waitFor(() => running(first), 'research\'s first job to run', 20000);
    const second = hold('second', capacity.cpus * 0.5, 'research');

    await page.goto(server.url + '/');
    const credit = page.locator('#queues tr[data-queue="research"] .credit');
    await waitFor(async () => /^owed \d/.test(await credit.textContent()), 'research\'s credit in the queues table', 20000);
    assert.match(await credit.locator('span').getAttribute('title'), /its next job may start beyond its guarantee/);
    assert.equal(await page.locator('#queues tr[data-queue="default"] .credit').textContent(), '');
    assert.match(await page.locator(`tr[data-job="${second}"] .wait-reason`).textContent(),
      /it would take its queue beyond its guarantee/);
    await shot('6-queue-credit');

    // research taken out of the file while it holds jobs: a row of its own says so.
    fs.writeFileSync(queuesFile, 'min_run_before_preemption: 1h\nqueues:\n  other: {guarantee: 10%}\n');
    const gone = page.locator('#queues tr[data-queue="research"].unconfigured');
    await waitFor(async () => (await gone.count()) === 1, 'research\'s row as no longer configured', 20000);
    assert.deepEqual(await gone.locator('td').allTextContents(), ['research (no longer configured)', '', '', '1', '1', '']);
    fs.writeFileSync(queuesFile, 'min_run_before_preemption: 1h\nqueues:\n  research: {guarantee: 50%}\n');
    await waitFor(async () => (await gone.count()) === 0, 'research configured again', 20000);

    fs.writeFileSync(release, '');
    for (const id of [borrower, first, second]) {
      await waitFor(async () => (await server.api(`/api/v1/jobs/${id}`)).state === 'SUCCEEDED', `${id} to succeed`, 30000);
    }
  } finally {  // the next tests need the cluster and its default queue back, also after a failure here
    fs.writeFileSync(release, '');
    fs.rmSync(queuesFile, { force: true });
  }
  await waitFor(async () => (await server.api('/api/v1/queues')).queues.length === 1, 'the default queues again');
  assert.deepEqual(pageErrors, [], 'no script error on the page');
});

// The application master of a job's latest attempt: the process of this server's home
// whose command line is `shoal am ... --job ID ...`.
function amPid(id) {
  for (const pid of processesWithEnv(`SHOAL_HOME=${server.home}`)) {
    let argv;
    try { argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'); } catch { continue; }
    if (argv[1] === 'am' && argv[argv.indexOf('--job') + 1] === id) return pid;
  }
  return null;
}

// A running job of 10,000 tasks, as its AM would report it: one worker failed, one still
// pending, the others running at `step`% progress.
const BIG = 10000;
function bigTasks(step) {
  const now = Date.now();
  return Array.from({ length: BIG }, (_, i) => {
    const state = i === 4321 ? 'FAILED' : i === BIG - 1 ? 'PENDING' : 'RUNNING';
    return {
      role: 'worker', index: i, rank: i, state, host: state === 'PENDING' ? '' : '127.0.0.1',
      container_id: state === 'PENDING' ? '' : `big-worker-${i}`, progress: (step % 100) / 100,
      started_ms: state === 'PENDING' ? 0 : now - 60000, finished_ms: state === 'FAILED' ? now - 1000 : 0,
      exit_code: state === 'FAILED' ? 3 : -1, message: state === 'FAILED' ? 'exited with code 3' : '',
      cpu: 50 + (i % 50), rss: (64 + (i % 64)) << 20, rss_peak: 128 << 20,
    };
  });
}

// The job page of a job with 10,000 tasks. No machine here runs 10,000 processes, so a
// real one-task job is started, its AM is paused (SIGSTOP: it stays alive, so the server
// keeps the attempt running, and it reports nothing) and the test reports 10,000 tasks in
// its place, as the first test reports a metric, once a second (as often as an AM reports
// so many tasks) while it checks the page: the page's live updates.
test('a job of 10,000 tasks: its page shows them 100 at a time with counts by role and state, pages, filters and stays quick while updates arrive',
  { timeout: 120000 }, async () => {
    const spec = path.join(server.home, 'big.yaml');
    fs.writeFileSync(spec, 'name: big\nroles:\n  worker: {cpus: 0.1, memory: 32M, command: "sleep 300"}\n');
    const id = server.cli('submit', spec);
    const attempt = await waitFor(async () => {
      const detail = await server.api(`/api/v1/jobs/${id}`);
      const latest = detail.attempts.at(-1);
      return detail.state === 'RUNNING' && latest && latest.am_addr && latest.tasks.length === 1 && latest;
    }, 'the job to run and its AM to report', 30000);
    const pid = await waitFor(() => amPid(id), 'the AM\'s process');
    process.kill(pid, 'SIGSTOP');
    let live = true;
    let reports = 0;
    const report = async (step) => {
      await server.api(`/internal/v1/jobs/${id}/attempts/${attempt.number}/report`, {
        method: 'POST', body: { state: 'RUNNING', message: '', am_addr: attempt.am_addr, tasks: bigTasks(step) },
      });
      reports += 1;
    };
    let updates = null;
    try {
      await report(1);
      updates = (async () => {
        for (let step = 2; live; step++) {
          await report(step);
          await new Promise((resolve) => setTimeout(resolve, 1000));  // an AM reports 10,000 tasks once a second
        }
      })();

      // What travels: the whole detail against one page of it.
      const headers = { Authorization: `Bearer ${server.token()}` };
      const sizeOf = async (q) => {
        const started = Date.now();
        const text = await (await fetch(`${server.url}/api/v1/jobs/${id}${q}`, { headers })).text();
        return `${(text.length / 1024).toFixed(0)} KiB in ${Date.now() - started} ms`;
      };
      console.log(`job detail with 10,000 tasks: whole ${await sizeOf('')}; a page of 100 ${await sizeOf('?task_limit=100')}`);

      // The first page, the counts, and how long after the navigation began they showed.
      const rows = page.locator('#containers tbody tr');
      const status = page.locator('#tasks-status');
      await page.goto(`${server.url}/jobs/${id}`);
      const shownAt = await (await page.waitForFunction(() => document.querySelectorAll('#containers tbody tr[data-task]').length === 100 &&
        /of 10,000 tasks/.test(document.getElementById('tasks-status').textContent) && performance.now(), null, { polling: 'raf', timeout: 20000 })).jsonValue();
      console.log(`the first page of 10,000 tasks shown ${shownAt.toFixed(0)} ms after the navigation began`);
      assert.ok(shownAt < 2000, `the first page took ${shownAt} ms`);
      assert.equal(await status.textContent(), '1–100 of 10,000 tasks');
      assert.equal(await rows.first().getAttribute('data-task'), 'worker-0');
      assert.equal(await rows.last().getAttribute('data-task'), 'worker-99');
      await waitFor(async () => /worker: 9,998 RUNNING, 1 FAILED, 1 PENDING/.test(await page.locator('#task-summary').textContent()),
        'the counts by role and state');
      assert.equal(await page.locator('#log-tabs button').count(), 2, 'one log tab for the task shown and one for the AM');
      await shot('7-big-job');

      // Next and previous, timed in the page from the click to the new page on screen.
      const turn = (button, expected) => page.evaluate(([selector, text]) => new Promise((resolve, reject) => {
        const target = document.getElementById('tasks-status');
        const started = performance.now();
        const done = () => { if (target.textContent === text) { observer.disconnect(); resolve(performance.now() - started); } };
        const observer = new MutationObserver(done);
        observer.observe(target, { childList: true, characterData: true, subtree: true });
        setTimeout(() => { observer.disconnect(); reject(new Error(`the pager says '${target.textContent}'`)); }, 10000);
        document.querySelector(selector).click();
      }), [button, expected]);
      const nextMs = await turn('#tasks-next', '101–200 of 10,000 tasks');
      assert.equal(await rows.first().getAttribute('data-task'), 'worker-100');
      assert.match(page.url(), /task_offset=100/, 'the page of tasks lives in the URL');
      const prevMs = await turn('#tasks-prev', '1–100 of 10,000 tasks');
      assert.ok(await page.locator('#tasks-prev').isDisabled(), 'no page before the first');
      console.log(`next page shown in ${nextMs.toFixed(0)} ms, previous in ${prevMs.toFixed(0)} ms`);
      assert.ok(nextMs < 2000 && prevMs < 2000, `paging took ${nextMs} and ${prevMs} ms`);

      // The failed task is one click away; the state filter finds the pending one.
      await page.locator('#tasks-went-wrong').click();
      await waitFor(async () => (await status.textContent()) === '1–1 of 1 matching tasks (10,000 in all)', 'the failed, lost or hung tasks');
      assert.equal(await rows.first().getAttribute('data-task'), 'worker-4321');
      assert.match(await rows.first().textContent(), /FAILED/);
      await page.selectOption('select[name=task_state]', 'PENDING');
      await waitFor(async () => (await status.textContent()) === '1–1 of 1 matching tasks (10,000 in all)' &&
        (await rows.first().getAttribute('data-task')) === 'worker-9999', 'the pending task');
      await page.locator('#task-summary button[data-state="RUNNING"]').click();
      await waitFor(async () => (await status.textContent()) === '1–100 of 9,998 matching tasks (10,000 in all)', 'the running tasks');

      // The filter and the page survive a reload; the last page is short.
      await page.goto(`${server.url}/jobs/${id}?task_state=RUNNING&task_offset=9900`);
      await waitFor(async () => (await status.textContent()) === '9,901–9,998 of 9,998 matching tasks (10,000 in all)', 'the last page of running tasks');
      assert.equal(await rows.count(), 98);
      assert.ok(await page.locator('#tasks-next').isDisabled(), 'no page after the last');

      // Live updates keep coming (progress moves on the page) while the page stays
      // responsive: the longest gap between 10 ms timers in the page over 3 s.
      const progressNow = async () => page.locator('#job-header .progress-text').textContent();
      const before = await progressNow();
      const reportsBefore = reports;
      const gap = await page.evaluate(() => new Promise((resolve) => {
        let last = performance.now();
        let longest = 0;
        const end = last + 3000;
        const tick = () => {
          const now = performance.now();
          longest = Math.max(longest, now - last);
          last = now;
          if (now < end) setTimeout(tick, 10); else resolve(longest);
        };
        setTimeout(tick, 10);
      }));
      await waitFor(async () => (await progressNow()) !== before, 'a live update on the page', 10000);
      console.log(`over 3 s with ${reports - reportsBefore} reports of 10,000 tasks arriving, the page's longest stall was ${gap.toFixed(0)} ms`);
      assert.ok(gap < 1000, `the page stalled for ${gap} ms`);
      assert.equal(await rows.count(), 98, 'the page still shows its own tasks');
      assert.deepEqual(pageErrors, [], 'no script error on the page');
    } finally {
      live = false;
      await updates;
      process.kill(pid, 'SIGCONT');
      server.cli('kill', id);
    }
  });
