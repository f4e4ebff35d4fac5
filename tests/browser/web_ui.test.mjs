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
import { ARTIFACTS, ShoalServer, launchBrowser, waitFor } from './harness.mjs';

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
