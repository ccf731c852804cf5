// One question: the prompt, column A's and column B's answers side by side with every judgment of each,
// the judges compared on A's model, and every model's verdicts on this question.

const LONG_TEXT = 1600; // characters after which a text starts collapsed

function collapsible(text, cls) {
  const box = el('div', 'md ' + (cls || ''));
  mdRender(text, box);
  const value = String(text == null ? '' : text);
  const lines = value.split('\n').length;
  if (value.length <= LONG_TEXT && lines <= 30) return box;
  box.classList.add('clipped');
  const wrap = el('div', 'collapsible');
  const toggle = el('button', 'toggle', 'show all (' + value.length.toLocaleString() + ' characters, ' + lines + ' lines)');
  toggle.type = 'button';
  toggle.addEventListener('click', () => {
    const clipped = box.classList.toggle('clipped');
    toggle.textContent = clipped ? 'show all (' + value.length.toLocaleString() + ' characters, ' + lines + ' lines)' : 'show less';
  });
  wrap.appendChild(box);
  wrap.appendChild(toggle);
  return wrap;
}

function usageLine(usage, extra) {
  const u = usage && typeof usage === 'object' ? usage : {};
  const parts = [];
  if (u.prompt_tokens != null || u.completion_tokens != null) parts.push('tokens ' + (u.prompt_tokens ?? '?') + ' in / ' + (u.completion_tokens ?? '?') + ' out');
  if (typeof u.latency_s === 'number') parts.push(u.latency_s.toFixed(2) + ' s');
  if (u.attempts > 1) parts.push(u.attempts + ' attempts');
  if (u.cached) parts.push('cached');
  if (typeof u.cost_usd === 'number') parts.push('$' + u.cost_usd.toPrecision(3));
  else if (u.cost != null) parts.push('cost ' + u.cost);
  if (u.truncated_thought) parts.push('thought cut off: empty answer');
  if (extra) parts.push(extra);
  return el('div', 'usage', parts.length ? parts.join(' \u00b7 ') : 'no usage recorded');
}

function rawFields(record) {
  const details = el('details', 'raw');
  details.appendChild(el('summary', null, 'raw fields'));
  details.appendChild(el('pre', 'plain', JSON.stringify(record, null, 2)));
  return details;
}

function cellText(value) {
  if (value === true) return el('span', 'ok', '\u2713');
  if (value === false) return el('span', 'bad', '\u2717');
  if (value === null || value === undefined) return el('span', 'dim', '\u2014');
  return document.createTextNode(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

// Any list of objects (rule instructions, rubric items, a kind this page has never seen) as a table.
function objectTable(items, extraColumn) {
  const columns = [];
  for (const item of items.slice(0, 500)) for (const key of Object.keys(item)) if (columns.indexOf(key) < 0 && columns.length < 14) columns.push(key);
  const table = el('table', 'grid');
  const head = el('tr');
  for (const key of columns) head.appendChild(el('th', null, key));
  if (extraColumn) head.appendChild(el('th', null, extraColumn.title));
  table.appendChild(el('thead')).appendChild(head);
  const body = table.appendChild(el('tbody'));
  items.forEach((item, k) => {
    const tr = el('tr');
    if (Object.values(item).some((v) => v === false)) tr.className = 'failing';
    for (const key of columns) { const td = el('td'); td.appendChild(cellText(item[key])); tr.appendChild(td); }
    if (extraColumn) { const td = el('td'); td.appendChild(cellText(extraColumn.value(k))); tr.appendChild(td); }
    body.appendChild(tr);
  });
  return table;
}

function gameBlock(game, model, index) {
  const box = el('div', 'game');
  const grade = game.a === model || game.b === model ?
    (game.label == null ? 6 : gradeOf(game.label, game.a === model)) : 0;
  const head = el('div', 'game-head');
  head.appendChild(el('span', 'game-name', 'game ' + (game.game || index + 1) + ': A = ' + game.a + ', B = ' + game.b));
  head.appendChild(el('span', 'label', game.label == null ? 'no verdict' : '[[' + game.label + ']]'));
  const verdict = el('span', 'chip o-' + (grade === 6 ? 'invalid' : GRADE_SIGN[grade] > 0 ? 'win' : GRADE_SIGN[grade] < 0 ? 'loss' : 'tie'),
    grade ? model + ' ' + GRADE_NAME[grade] : '');
  head.appendChild(verdict);
  box.appendChild(head);
  box.appendChild(collapsible(game.raw, 'judge-text'));
  if (game.raw_chars) box.appendChild(el('div', 'dim', 'reply kept in part: ' + game.raw_chars + ' characters in all'));
  if (game.reask_raw) {
    const details = el('details', 'reask');
    details.appendChild(el('summary', null, 're-asked for a verdict'));
    details.appendChild(collapsible(game.reask_raw, 'judge-text'));
    box.appendChild(details);
  }
  box.appendChild(usageLine(game.usage, game.verdict_source ? 'verdict from ' + game.verdict_source : ''));
  return box;
}

function gradeOf(label, modelIsA) {
  const fromA = { 'A>>B': 1, 'A>B': 2, 'A=B': 3, 'B>A': 4, 'B>>A': 5 };
  const grade = fromA[label];
  if (!grade) return 6;
  return modelIsA ? grade : 6 - grade;
}

const BOOKKEEPING = ['kind', 'key', 'uid', 'sample', 'model', 'judge', 'tstamp', 'category'];

function judgedBlock(judged, meta, active, criteria) {
  const record = judged.record || {};
  const box = el('div', 'judged kind-' + judged.kind + (active ? ' active' : ''));
  const head = el('div', 'judged-head');
  head.appendChild(el('span', 'judge-name', judged.judge));
  head.appendChild(el('span', 'tag', judged.kind + (record.protocol ? ' \u00b7 ' + record.protocol : '') + (record.metric ? ' \u00b7 ' + record.metric : '')));
  box.appendChild(head);
  if (judged.layout === 'games' && Array.isArray(record.games)) {
    if (record.invalid) box.appendChild(el('div', 'warn', 'invalid: the judge gave no readable verdict in a game'));
    record.games.forEach((game, k) => box.appendChild(gameBlock(game, judged.model, k)));
  } else if (judged.layout === 'items' && Array.isArray(record.items)) {
    box.appendChild(rubricBlock(judged, criteria));
  } else if (judged.layout === 'failure') {
    box.appendChild(el('div', 'warn', 'the request failed and nothing replaced it: ' + [record.kind, record.status, record.message || record.error].filter((x) => x != null).join(' \u00b7 ')));
  } else {
    if (judged.layout !== 'point') { // a kind shown as its own fields (a plugin's, one not installed here)
      const own = {};
      for (const key of Object.keys(record)) {
        const value = record[key];
        if (BOOKKEEPING.indexOf(key) < 0 && !key.endsWith('_hash') && (value === null || typeof value !== 'object')) own[key] = value;
      }
      if (Object.keys(own).length) box.appendChild(objectTable([own]));
    }
    if (record.value !== undefined) box.appendChild(el('div', 'point-value', 'value: ' + (record.value === null ? 'unscored' : record.value)));
    const detail = record.detail && typeof record.detail === 'object' ? record.detail : {};
    const ids = Array.isArray(meta.instruction_id_list) ? meta.instruction_id_list : [];
    for (const source of [detail, record]) {
      for (const key of Object.keys(source)) {
        const value = source[key];
        if (!Array.isArray(value) || !value.length || !value.every((x) => x && typeof x === 'object' && !Array.isArray(x))) continue;
        const kwargs = key === 'instructions' && Array.isArray(meta.kwargs) && ids.length === value.length ?
          { title: 'kwargs', value: (k) => meta.kwargs[k] } : null;
        box.appendChild(el('div', 'table-name', key));
        box.appendChild(objectTable(value, kwargs));
      }
    }
    for (const key of ['explanation', 'reason', 'reasoning', 'raw', 'text']) {
      if (typeof record[key] === 'string') box.appendChild(collapsible(record[key], 'judge-text'));
    }
  }
  box.appendChild(rawFields(record));
  return box;
}

function pane(payload, col, which) {
  const box = el('section', 'pane pane-' + which);
  const name = IX.models[col.model];
  const head = el('h3', 'pane-head');
  head.appendChild(el('span', 'col-tag', which));
  head.appendChild(el('span', null, name + (isBaseline(col.run, col.model) ? ' (baseline)' : '')));
  if (NR > 1) head.appendChild(el('span', 'tag', IX.runs[col.run].name));
  box.appendChild(head);
  const run = payload.runs[col.run];
  if (!run) { box.appendChild(el('p', 'dim', 'this run has nothing on this question')); return box; }
  const answer = run.answers[name];
  if (answer) {
    box.appendChild(collapsible(answer.answer, 'answer'));
    if (answer.reasoning) {
      const details = el('details', 'reasoning');
      details.appendChild(el('summary', null, 'reasoning (' + String(answer.reasoning).length + ' characters)'));
      details.appendChild(collapsible(answer.reasoning, 'thought'));
      box.appendChild(details);
    }
    box.appendChild(usageLine(answer.usage, answer.finish_reason ? 'finish: ' + answer.finish_reason : (answer.source ? 'source: ' + answer.source : '')));
    box.appendChild(rawFields(answer));
  } else {
    box.appendChild(el('p', 'warn', 'no answer' + (run.failures.some((f) => f.model === name) ? ': the request failed' : '')));
  }
  const mine = run.judged.filter((j) => j.model === name);
  mine.sort((x, y) => (y.judge === IX.judges[col.judge]) - (x.judge === IX.judges[col.judge]));
  for (const judged of mine) box.appendChild(judgedBlock(judged, payload.meta || {}, judged.judge === IX.judges[col.judge], payload.criteria || {}));
  if (!mine.length) box.appendChild(el('p', 'dim', isBaseline(col.run, col.model) ? 'the baseline: the judged models\u2019 answers were compared with this one' : 'no judgment of this answer'));
  return box;
}

function judgesTable(i, col) {
  const box = el('section', 'judges-compare');
  box.appendChild(el('h3', null, 'Judges on ' + IX.models[col.model] + (NR > 1 ? ' (' + IX.runs[col.run].name + ')' : '')));
  const table = el('table', 'grid');
  const head = el('tr');
  for (const title of ['judge', 'game 1', 'game 2', 'outcome']) head.appendChild(el('th', null, title));
  table.appendChild(el('thead')).appendChild(head);
  const body = table.appendChild(el('tbody'));
  const outcomes = runJudges(col.run).map((j) => outcome(cellCode(i, col.run, col.model, j)));
  const counted = outcomes.filter((o) => o && ['invalid', 'failed', 'other'].indexOf(o) < 0);
  const majority = counted.sort((a, b) => counted.filter((x) => x === b).length - counted.filter((x) => x === a).length)[0];
  runJudges(col.run).forEach((j, k) => {
    const code = cellCode(i, col.run, col.model, j);
    const g = games(code);
    const tr = el('tr');
    const differs = outcomes[k] && majority && outcomes[k] !== majority && counted.indexOf(outcomes[k]) >= 0;
    if (differs) tr.className = 'disagree';
    tr.appendChild(el('td', null, IX.judges[j]));
    tr.appendChild(el('td', null, g ? GRADE_MARK[g[0]] + ' ' + GRADE_NAME[g[0]] : ''));
    tr.appendChild(el('td', null, g ? GRADE_MARK[g[1]] + ' ' + GRADE_NAME[g[1]] : ''));
    const td = el('td');
    td.appendChild(chip(code, IX.judges[j]));
    td.appendChild(el('span', 'outcome-word', ' ' + (outcomes[k] || 'nothing') + (differs ? ' \u2014 disagrees' : '')));
    tr.appendChild(td);
    body.appendChild(tr);
  });
  box.appendChild(table);
  return box;
}

function modelsGrid(i, r, onPick) {
  const box = el('section', 'models-grid');
  box.appendChild(el('h3', null, 'Every model on this question' + (NR > 1 ? ' (' + IX.runs[r].name + ')' : '') + ' \u2014 click a row to compare it as B'));
  const table = el('table', 'grid');
  const head = el('tr');
  head.appendChild(el('th', null, 'model'));
  head.appendChild(el('th', null, 'answer'));
  for (const j of runJudges(r)) head.appendChild(el('th', null, IX.judges[j]));
  table.appendChild(el('thead')).appendChild(head);
  const body = table.appendChild(el('tbody'));
  for (const m of runModels(r)) {
    const tr = el('tr', 'pick');
    tr.dataset.model = String(m);
    tr.appendChild(el('td', null, IX.models[m] + (isBaseline(r, m) ? ' (baseline)' : '')));
    tr.appendChild(el('td', null, ['none', 'yes', 'empty', 'failed'][answerCode(i, r, m)]));
    for (const j of runJudges(r)) { const td = el('td'); td.appendChild(chip(cellCode(i, r, m, j), IX.judges[j])); tr.appendChild(td); }
    tr.addEventListener('click', () => onPick(m));
    body.appendChild(tr);
  }
  box.appendChild(table);
  return box;
}

// A's and B's verdicts on this question in one line, and whether they differ.
function compareStrip(i) {
  const strip = el('div', 'compare-strip');
  const a = colOutcome(i, S.A);
  const b = colOutcome(i, S.B);
  for (const which of ['A', 'B']) {
    const col = S[which];
    strip.appendChild(el('span', 'col-tag tag-' + which, which));
    strip.appendChild(el('span', null, IX.models[col.model] + ' · ' + IX.judges[col.judge] + (NR > 1 ? ' · ' + IX.runs[col.run].name : '')));
    strip.appendChild(chip(cellCode(i, col.run, col.model, col.judge), which));
    strip.appendChild(el('span', 'outcome-word', (which === 'A' ? a : b) || 'nothing'));
  }
  if (!comparable()) {
    const baseline = isBaseline(S.B.run, S.B.model) ? 'B' : 'A';
    strip.appendChild(el('span', 'same', baseline + ' is a baseline: the other column\u2019s verdict is against it, nothing to compare'));
  } else {
    strip.appendChild(el('span', a === b ? 'same' : 'changed', a === b ? 'same verdict' : 'verdicts differ'));
  }
  return strip;
}

function neighbours(i) {
  const list = S.matches;
  let at = -1;
  for (let k = 0; k < list.length; k++) if (list[k] === i) { at = k; break; }
  if (at < 0) return { prev: i > 0 ? i - 1 : -1, next: i + 1 < N ? i + 1 : -1, at: -1 };
  return { prev: at > 0 ? list[at - 1] : -1, next: at + 1 < list.length ? list[at + 1] : -1, at };
}

async function renderQuestion(main, i) {
  S.current = i;
  main.replaceChildren(el('p', 'dim', 'loading\u2026'));
  let payload;
  try { payload = await loadPayload(i); } catch (error) { main.replaceChildren(el('p', 'warn', String(error.message || error))); return; }
  if (S.current !== i) return;
  const page = el('article', 'question');
  const nav = el('nav', 'qnav');
  const where = neighbours(i);
  const link = (label, target, id) => { const a = el('a', 'button', label); a.id = id; if (target >= 0) a.href = '#/q/' + target; else a.classList.add('disabled'); return a; };
  const back = el('a', 'button', '\u2190 list');
  back.href = '#/';
  back.id = 'back';
  nav.appendChild(back);
  nav.appendChild(link('\u2039 prev', where.prev, 'prev'));
  nav.appendChild(link('next \u203a', where.next, 'next'));
  nav.appendChild(el('span', 'dim', where.at >= 0 ? (where.at + 1) + ' of ' + S.matches.length + ' shown' : 'not in the filtered list'));
  page.appendChild(nav);
  const title = el('h2', 'qtitle');
  title.appendChild(el('span', 'uid', payload.uid + (payload.sample ? ' #' + payload.sample : '')));
  title.appendChild(el('span', 'tag', payload.category));
  title.appendChild(el('span', 'tag', payload.bench));
  for (let k = 0; k < N; k++) { // the other samples of this question (answers drawn again)
    if (k === i || IX.rows.uid[k] !== payload.uid || ROW_BENCH[k] !== ROW_BENCH[i]) continue;
    const other = el('a', 'button sample-link', 'sample ' + IX.rows.sample[k]);
    other.href = '#/q/' + k;
    title.appendChild(other);
  }
  page.appendChild(title);
  const prompt = el('section', 'prompt');
  prompt.appendChild(el('h3', null, 'Prompt'));
  const why = IX.runs.map((run) => (run.bench === ROW_BENCH[i] ? run.prompt_note : null)).find((note) => note);
  prompt.appendChild(payload.prompt == null ? el('p', 'warn prompt-missing', why || 'prompt not available (see the summary notes)') : collapsible(payload.prompt, 'prompt-text'));
  if (payload.meta && Object.keys(payload.meta).length) prompt.appendChild(rawFields(payload.meta)).firstChild.textContent = 'question metadata';
  page.appendChild(prompt);
  const rerender = () => renderQuestion(main, i);
  const controls = el('div', 'qcolumns');
  controls.appendChild(columnControls('A', rerender));
  controls.appendChild(columnControls('B', rerender));
  page.appendChild(controls);
  if (S.B.model >= 0) page.appendChild(compareStrip(i));
  const sides = el('div', 'sides' + (S.B.model >= 0 ? ' two' : ''));
  sides.appendChild(pane(payload, S.A, 'A'));
  if (S.B.model >= 0) sides.appendChild(pane(payload, S.B, 'B'));
  page.appendChild(sides);
  if (runJudges(S.A.run).length > 1) page.appendChild(judgesTable(i, S.A));
  page.appendChild(modelsGrid(i, S.A.run, (m) => { S.B.run = S.A.run; S.B.model = m; fixColumn(S.B); rerender(); }));
  main.replaceChildren(page);
  window.scrollTo(0, 0);
}
