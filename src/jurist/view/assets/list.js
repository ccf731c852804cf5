// The question list: two columns to compare (A and B, each a run, a model and a judge), the filters, and
// a virtual list that keeps only the rows on screen in the DOM, so 50,000 rows scroll like 50.

const ROW_H = 58;
const OUTCOME_MARK = {
  win: 'W', loss: 'L', tie: 'T', split: 'S', invalid: '!', pass: '\u2713', part: '\u00bd', fail: '\u2717',
  unscored: '\u2205', other: '\u2026', failed: '\u26a0',
};
const S = {
  A: { run: 0, model: 0, judge: 0 },
  B: { run: 0, model: -1, judge: 0 },
  f: { q: '', bench: -1, cat: -1, verdict: '', status: '', swap: false, judges: false, differ: false },
  matches: new Int32Array(0),
  current: -1,
  searching: null,
};

function runModels(r) { return IX.runs[r].models; }
function runJudges(r) { return IX.runs[r].judges; }
function isBaseline(r, m) { return IX.runs[r].baselines.indexOf(IX.models[m]) >= 0; }

// A is the first run's first judged model; B the same model in the next run of the same task (two
// checkpoints, two sweeps), else another model of the first run, else its baseline: never another task's.
function initColumns() {
  const candidates = runModels(0).filter((m) => !isBaseline(0, m));
  const models = candidates.length ? candidates : runModels(0);
  S.A = { run: 0, model: models.length ? models[0] : 0, judge: runJudges(0).length ? runJudges(0)[0] : 0 };
  const next = IX.runs.findIndex((run, r) => r > 0 && run.bench === IX.runs[0].bench);
  if (next > 0) {
    const same = runModels(next).indexOf(S.A.model) >= 0 ? S.A.model : runModels(next)[0];
    const judge = runJudges(next).indexOf(S.A.judge) >= 0 ? S.A.judge : runJudges(next)[0];
    S.B = { run: next, model: same === undefined ? -1 : same, judge: judge === undefined ? 0 : judge };
  } else {
    const other = models.length > 1 ? models[1] : runModels(0).find((m) => isBaseline(0, m));
    S.B = { run: 0, model: other === undefined ? -1 : other, judge: S.A.judge };
  }
}

function option(select, value, label) {
  const node = el('option', null, label);
  node.value = String(value);
  select.appendChild(node);
  return node;
}

function select(label, cls, fill, value, onChange) {
  const wrap = el('label', 'field ' + (cls || ''));
  wrap.appendChild(el('span', 'field-name', label));
  const box = el('select');
  fill(box);
  box.value = String(value);
  box.addEventListener('change', () => onChange(box.value));
  wrap.appendChild(box);
  return wrap;
}

function columnControls(which, onChange) {
  const col = S[which];
  const box = el('div', 'column-pick col-' + which);
  box.appendChild(el('span', 'col-tag', which));
  if (NR > 1) {
    box.appendChild(select('run', 'run-pick', (s) => IX.runs.forEach((run, r) => option(s, r, run.name)),
      col.run, (v) => { col.run = +v; fixColumn(col); onChange(); }));
  }
  box.appendChild(select('model', 'model-pick', (s) => {
    if (which === 'B') option(s, -1, '\u2014 none \u2014');
    for (const m of runModels(col.run)) option(s, m, IX.models[m] + (isBaseline(col.run, m) ? ' (baseline)' : ''));
  }, col.model, (v) => { col.model = +v; onChange(); }));
  box.appendChild(select('judge', 'judge-pick', (s) => {
    for (const j of runJudges(col.run)) option(s, j, IX.judges[j]);
  }, col.judge, (v) => { col.judge = +v; onChange(); }));
  return box;
}

function fixColumn(col) {
  if (col.model >= 0 && runModels(col.run).indexOf(col.model) < 0) col.model = runModels(col.run)[0];
  if (runJudges(col.run).indexOf(col.judge) < 0) col.judge = runJudges(col.run)[0] || 0;
}

function colOutcome(i, col) { return col.model < 0 ? '' : outcome(cellCode(i, col.run, col.model, col.judge)); }

// A's and B's verdicts are compared only when each column is a judged model (two models, two judges, two
// runs): a baseline is what A was judged against, not a verdict of its own.
function comparable() {
  return S.A.model >= 0 && S.B.model >= 0 && !isBaseline(S.A.run, S.A.model) && !isBaseline(S.B.run, S.B.model);
}

function matchesVerdict(code, want) {
  if (!want) return true;
  if (want.startsWith('g')) { // a game with this grade
    const g = games(code);
    return !!g && (g[0] === +want.slice(1) || g[1] === +want.slice(1));
  }
  return outcome(code) === want;
}

function matchesStatus(i, status) {
  if (!status) return true;
  const { run, model, judge } = S.A;
  const code = cellCode(i, run, model, judge);
  const answer = answerCode(i, run, model);
  if (status === 'invalid') { const g = games(code); return !!g && (g[0] === 6 || g[1] === 6); }
  if (status === 'failed') return answer === 3 || code === 55;
  if (status === 'unscored') return answer === 1 && (code === 0 || code === 53);
  if (status === 'empty') return answer === 2;
  if (status === 'missing') return answer === 0;
  return true;
}

async function applyFilters() {
  const f = S.f;
  const started = performance.now();
  let mask = null;
  if (f.q.trim()) {
    const query = f.q;
    S.searching = query;
    setStatus('searching\u2026');
    mask = await searchMask(query, (k, n) => { if (k < n) setStatus('indexing text for search: ' + Math.round(100 * k / n) + '%'); });
    if (S.searching !== query) return; // a newer query replaced this one
  }
  const t0 = performance.now();
  const { run, model, judge } = S.A;
  const canCompare = comparable();
  const out = new Int32Array(N);
  let n = 0;
  for (let i = 0; i < N; i++) {
    if (mask && !mask[i]) continue;
    if (f.bench >= 0 && ROW_BENCH[i] !== f.bench) continue;
    if (f.cat >= 0 && ROW_CAT[i] !== f.cat) continue;
    if (f.verdict && !matchesVerdict(cellCode(i, run, model, judge), f.verdict)) continue;
    if (f.status && !matchesStatus(i, f.status)) continue;
    if (f.swap && !swapDisagrees(cellCode(i, run, model, judge))) continue;
    if (f.judges && !judgesDisagree(i, run, model)) continue;
    if (f.differ && (!canCompare || colOutcome(i, S.A) === colOutcome(i, S.B))) continue;
    out[n++] = i;
  }
  S.matches = out.subarray(0, n);
  renderList();
  PERF.filterMs.push(performance.now() - t0);
  PERF.lastQueryMs = performance.now() - started;
  setStatus(n + ' of ' + N + ' rows');
}

function setStatus(text) {
  const node = document.getElementById('count');
  if (node) node.textContent = text;
}

let listBox = null;
let listSpacer = null;
let drawQueued = false;

function renderList() {
  if (!listBox) return;
  listSpacer.style.height = (S.matches.length * ROW_H) + 'px';
  if (listBox.scrollTop > S.matches.length * ROW_H) listBox.scrollTop = 0;
  drawRows();
}

function drawRows() {
  drawQueued = false;
  const top = listBox.scrollTop;
  const height = listBox.clientHeight || 800;
  const first = Math.max(0, Math.floor(top / ROW_H) - 4);
  const last = Math.min(S.matches.length, Math.ceil((top + height) / ROW_H) + 4);
  const rows = [];
  if (!S.matches.length) rows.push(el('p', 'empty', N ? 'No question matches these filters.' : 'This run has no answers yet.'));
  for (let k = first; k < last; k++) rows.push(listRow(S.matches[k], k));
  listSpacer.replaceChildren(...rows);
}

function chip(code, title) {
  const o = outcome(code);
  const node = el('span', 'chip o-' + (o || 'none'));
  const g = games(code);
  node.textContent = g ? GRADE_MARK[g[0]] + ' ' + GRADE_MARK[g[1]] : (OUTCOME_MARK[o] || '\u00b7');
  node.title = title + ': ' + (o || 'nothing');
  return node;
}

function listRow(i, k) {
  const row = el('div', 'row');
  row.style.transform = 'translateY(' + (k * ROW_H) + 'px)';
  row.dataset.row = String(i);
  row.tabIndex = 0;
  const text = el('div', 'row-text');
  const head = el('div', 'row-head');
  head.appendChild(el('span', 'uid', IX.rows.uid[i] + (IX.rows.sample[i] ? ' #' + IX.rows.sample[i] : '')));
  head.appendChild(el('span', 'tag', IX.cats[ROW_CAT[i]]));
  if (IX.benches.length > 1) head.appendChild(el('span', 'tag', IX.benches[ROW_BENCH[i]]));
  text.appendChild(head);
  text.appendChild(el('div', 'title', IX.rows.title[i] || '(prompt not available)'));
  row.appendChild(text);
  const chips = el('div', 'chips');
  for (const which of ['A', 'B']) {
    const col = S[which];
    if (col.model < 0) continue;
    chips.appendChild(el('span', 'chip-label', which));
    chips.appendChild(chip(cellCode(i, col.run, col.model, col.judge), which));
  }
  row.appendChild(chips);
  return row;
}

function filterPanel(onChange) {
  const panel = el('aside', 'filters');
  const search = el('input', 'search');
  search.type = 'search';
  search.id = 'search';
  search.placeholder = 'search prompts, answers, judge text';
  search.value = S.f.q;
  let timer = 0;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => { S.f.q = search.value; onChange(); }, 120);
  });
  search.addEventListener('keydown', (e) => { if (e.key === 'Enter') { clearTimeout(timer); S.f.q = search.value; onChange(); } });
  panel.appendChild(search);
  panel.appendChild(columnControls('A', onChange));
  panel.appendChild(columnControls('B', onChange));
  const f = S.f;
  if (IX.benches.length > 1) {
    panel.appendChild(select('task', 'bench-pick', (s) => { option(s, -1, 'all'); IX.benches.forEach((b, k) => option(s, k, b)); },
      f.bench, (v) => { f.bench = +v; onChange(); }));
  }
  panel.appendChild(select('category', 'cat-pick', (s) => { option(s, -1, 'all'); IX.cats.forEach((c, k) => option(s, k, c)); },
    f.cat, (v) => { f.cat = +v; onChange(); }));
  panel.appendChild(select('verdict of A', 'verdict-pick', (s) => {
    option(s, '', 'any');
    for (const o of ['win', 'tie', 'loss', 'split', 'invalid', 'pass', 'part', 'fail']) option(s, o, o === 'part' ? 'partial' : o);
    for (let g = 1; g <= 6; g++) option(s, 'g' + g, 'a game: ' + GRADE_MARK[g] + ' ' + GRADE_NAME[g]);
  }, f.verdict, (v) => { f.verdict = v; onChange(); }));
  panel.appendChild(select('status of A', 'status-pick', (s) => {
    option(s, '', 'any');
    for (const o of ['invalid', 'failed', 'unscored', 'empty', 'missing']) option(s, o, o);
  }, f.status, (v) => { f.status = v; onChange(); }));
  const checks = [['swap', 'swapped games disagree (A)'], ['judges', 'judges disagree (A\u2019s model)'], ['differ', 'A and B differ (two judged models or judges)']];
  for (const [key, label] of checks) {
    const wrap = el('label', 'check');
    const box = el('input');
    box.type = 'checkbox';
    box.id = 'f-' + key;
    box.checked = f[key];
    box.addEventListener('change', () => { f[key] = box.checked; onChange(); });
    wrap.appendChild(box);
    wrap.appendChild(el('span', null, label));
    panel.appendChild(wrap);
  }
  panel.appendChild(el('p', 'legend', 'chips: each game from the model\u2019s side (\u226b much better, > better, = tie, < worse, \u226a much worse, ? no verdict); rule checks and rubrics \u2713 full marks, \u2717 none (the scale\u2019s floor), \u00bd between, \u2205 unscored.'));
  return panel;
}

function renderListView(main) {
  const layout = el('div', 'list-layout');
  const rebuild = () => { renderListView(main); };
  layout.appendChild(filterPanel(() => { applyFilters(); refreshColumns(layout, rebuild); }));
  const right = el('section', 'list-pane');
  const count = el('div', 'count');
  count.id = 'count';
  right.appendChild(count);
  listBox = el('div', 'list');
  listBox.id = 'list';
  listSpacer = el('div', 'list-spacer');
  listBox.appendChild(listSpacer);
  listBox.addEventListener('scroll', () => { if (!drawQueued) { drawQueued = true; requestAnimationFrame(drawRows); } });
  listBox.addEventListener('click', (e) => {
    const row = e.target.closest('.row');
    if (row) location.hash = '#/q/' + row.dataset.row;
  });
  listBox.addEventListener('keydown', (e) => {
    const row = e.target.closest('.row');
    if (row && e.key === 'Enter') location.hash = '#/q/' + row.dataset.row;
  });
  right.appendChild(listBox);
  layout.appendChild(right);
  main.replaceChildren(layout);
  lastRuns = S.A.run + ',' + S.B.run;
  return applyFilters();
}

// A run change in a column changes which models and judges it offers: redraw the panel then.
let lastRuns = '';
function refreshColumns(layout, rebuild) {
  const runs = S.A.run + ',' + S.B.run;
  if (runs !== lastRuns) rebuild();
}
