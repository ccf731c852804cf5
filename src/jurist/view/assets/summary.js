// The summary tab: each run's leaderboard with its intervals drawn, per-category scores, judge sanity
// (position consistency, tie rate), and the task tables of rule-checked and rubric-graded runs.

const SVG_NS = 'http://www.w3.org/2000/svg';
const RULE_METRICS = ['prompt_strict', 'inst_strict', 'prompt_loose', 'inst_loose'];

function svgNode(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const key of Object.keys(attrs)) node.setAttribute(key, String(attrs[key]));
  return node;
}

function num(value, digits) { return typeof value === 'number' && isFinite(value) ? value.toFixed(digits ?? 1) : '\u2014'; }

// The tables' one interval format (report/intervals.py): "(-x / +y)" around the estimate, "(\u00b10)" when it
// has no width at the printed precision, "(\u00b1<0.1)" when it has some below it, "*" when the fit ran off.
function intervalText(value, low, high, digits, unreliable) {
  const d = digits ?? 1;
  if (![value, low, high].every((v) => typeof v === 'number' && isFinite(v))) return 'none';
  const below = value - low, above = high - value, zero = (0).toFixed(d);
  const mark = unreliable ? '*' : '';
  if (Math.abs(below).toFixed(d) === zero && Math.abs(above).toFixed(d) === zero) {
    const none = Math.max(Math.abs(below), Math.abs(above)) <= 1e-9 * Math.max(Math.abs(value), 1);
    return (none ? '(\u00b10)' : '(\u00b1<' + Math.pow(10, -d).toFixed(d) + ')') + mark;
  }
  return '(-' + Math.max(below, 0).toFixed(d) + ' / +' + Math.max(above, 0).toFixed(d) + ')' + mark;
}

// One interval as a drawing: the axis, the reference line, the interval as a band, the estimate as a dot.
function ciBar(value, low, high, scale, reference, width, digits) {
  const w = width || 220;
  const h = 18;
  const span = scale[1] - scale[0] || 1;
  const x = (v) => 4 + (w - 8) * Math.min(1, Math.max(0, (v - scale[0]) / span));
  const svg = svgNode('svg', { width: w, height: h, viewBox: '0 0 ' + w + ' ' + h, class: 'ci' });
  svg.appendChild(svgNode('line', { x1: 4, x2: w - 4, y1: h / 2, y2: h / 2, class: 'ci-axis' }));
  if (reference != null) svg.appendChild(svgNode('line', { x1: x(reference), x2: x(reference), y1: 1, y2: h - 1, class: 'ci-ref' }));
  if (typeof low === 'number' && typeof high === 'number') {
    svg.appendChild(svgNode('rect', { x: x(low), y: 5, width: Math.max(1.5, x(high) - x(low)), height: h - 10, rx: 2, class: 'ci-band' }));
  }
  if (typeof value === 'number') svg.appendChild(svgNode('circle', { cx: x(value), cy: h / 2, r: 4, class: 'ci-dot' }));
  const label = svgNode('title', {});
  label.textContent = num(value, digits) + (typeof low === 'number' ? ' ' + intervalText(value, low, high, digits) : '');
  svg.appendChild(label);
  return svg;
}

function scaleOf(rows, key, low, high) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of rows) for (const k of [key, low, high]) if (typeof row[k] === 'number') { lo = Math.min(lo, row[k]); hi = Math.max(hi, row[k]); }
  if (lo >= 0 && hi <= 100) return [0, 100];
  return lo < hi ? [lo - (hi - lo) * 0.05, hi + (hi - lo) * 0.05] : [lo - 1, hi + 1];
}

function table(headers) {
  const node = el('table', 'grid');
  const tr = el('tr');
  for (const title of headers) tr.appendChild(el('th', null, title));
  node.appendChild(el('thead')).appendChild(tr);
  node.appendChild(el('tbody'));
  return node;
}

function addRow(tableNode, cells, cls) {
  const tr = el('tr', cls || null);
  for (const cell of cells) {
    const td = el('td');
    if (cell instanceof Node) td.appendChild(cell); else td.textContent = cell == null ? '' : String(cell);
    tr.appendChild(td);
  }
  tableNode.tBodies[0].appendChild(tr);
  return tr;
}

function pairwiseBoard(rows, summary) {
  const box = el('div');
  const key = rows.some((r) => typeof r.score === 'number') ? 'score' : 'rating';
  const scale = scaleOf(rows, key, 'ci_low', 'ci_high');
  const reference = key === 'score' && summary.method !== 'bt' ? 50 : null;
  const groups = new Map();
  for (const row of rows) {
    const name = (row.judge || '') + (row.category ? ' \u00b7 ' + row.category : '');
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(row);
  }
  for (const [name, group] of groups) {
    box.appendChild(el('h4', null, name ? 'judge ' + name : 'leaderboard'));
    const t = table(['#', 'model', Math.round(100 * summary.ci_level) + '% interval', key, 'interval', 'n', 'invalid', 'avg tokens']);
    group.forEach((row, k) => addRow(t, [k + 1, row.model + (row.baseline ? ' (baseline)' : ''),
      ciBar(row[key], row.ci_low, row.ci_high, scale, reference), num(row[key]),
      intervalText(row[key], row.ci_low, row.ci_high, 1, row.ci_unreliable),
      row.n, row.invalid, row.avg_tokens == null ? '' : Math.round(row.avg_tokens)], row.baseline ? 'baseline' : ''));
    box.appendChild(t);
  }
  return box;
}

function ruleBoard(rows, summary) {
  const box = el('div');
  const headers = ['model'];
  for (const metric of RULE_METRICS) headers.push(metric.replace('_', ' '));
  headers.push('questions', 'samples', 'empty', 'truncated');
  const t = table(headers);
  for (const row of rows) {
    const cells = [row.model];
    for (const metric of RULE_METRICS) {
      const cell = el('div', 'metric');
      cell.appendChild(ciBar(row[metric], row[metric + '_ci_low'], row[metric + '_ci_high'], [0, 100], null, 140));
      cell.appendChild(el('span', 'metric-value' + (row.headline === metric ? ' headline' : ''), num(row[metric])));
      cells.push(cell);
    }
    cells.push(row.n_questions, row.samples, row.empty, row.truncated);
    addRow(t, cells);
  }
  box.appendChild(t);
  box.appendChild(el('p', 'dim', 'intervals: ' + Math.round(100 * summary.ci_level) + '%, questions resampled with their samples'));
  return box;
}

// A rubric run's scores on their own scale (HealthBench's fraction of the possible points, 0-1;
// WritingBench's mean criterion score, 1-10), then the breakdowns the benchmark reports: the field, label,
// digits and breakdowns are the family's (summary.board), never guessed from a benchmark's name.
function rubricBoard(rows, summary) {
  const box = el('div');
  const board = summary.board || {};
  const key = board.score_field || 'score';
  const scale = summary.scale || [0, 1];
  const digits = board.digits ?? 3;
  const t = table(['#', 'model', 'judge', Math.round(100 * summary.ci_level) + '% interval', board.score_label || 'score (0-1)',
    'interval', 'answers', 'unscored answers', 'unscored items']);
  rows.forEach((row, k) => addRow(t, [k + 1, row.model, row.judge, ciBar(row[key], row.ci_low, row.ci_high, scale, null, 220, digits),
    num(row[key], digits), intervalText(row[key], row.ci_low, row.ci_high, digits),
    row.n_answers, row.unscored_answers, row.unscored_items]));
  box.appendChild(t);
  const parts = board.breakdowns || [];
  for (const [field, label, title] of parts) {
    const names = [...new Set(rows.flatMap((row) => Object.keys(row[field] || {})))];
    if (!names.length) continue;
    box.appendChild(el('h4', null, title));
    const breakdown = table([label].concat(rows.map((row) => row.model + ' (' + row.judge + ')')));
    for (const name of names) {
      addRow(breakdown, [name].concat(rows.map((row) => {
        const value = (row[field] || {})[name];
        return num(value && typeof value === 'object' ? value.score : value, digits);
      })));
    }
    box.appendChild(breakdown);
  }
  return box;
}

// The layout is the run's family's (families/door.py SummaryBoard), as a judge kind names its layout.
const BOARDS = { pairwise: pairwiseBoard, rubric: rubricBoard, rules: ruleBoard };

function leaderboardBlock(rows, summary) {
  const draw = BOARDS[(summary.board || {}).layout];
  return draw ? draw(rows, summary) : genericTable(rows);
}

function genericTable(rows) {
  const keys = [];
  for (const row of rows) for (const k of Object.keys(row)) if (keys.indexOf(k) < 0 && (row[k] === null || typeof row[k] !== 'object')) keys.push(k);
  const t = table(keys);
  for (const row of rows) addRow(t, keys.map((k) => (typeof row[k] === 'number' && !Number.isInteger(row[k]) ? num(row[k], 2) : row[k])));
  return t;
}

function categoryTable(rows) {
  const box = el('div');
  const judges = [...new Set(rows.map((r) => r.judge))];
  const cats = [...new Set(rows.map((r) => r.category))];
  for (const judge of judges) {
    const mine = rows.filter((r) => r.judge === judge);
    box.appendChild(el('h4', null, 'judge ' + judge));
    const t = table(['model'].concat(cats));
    for (const model of [...new Set(mine.map((r) => r.model))]) {
      const cells = [model];
      for (const cat of cats) {
        const row = mine.find((r) => r.model === model && r.category === cat);
        const cell = el('div', 'metric');
        if (row) {
          cell.appendChild(ciBar(row.score, row.ci_low, row.ci_high, [0, 100], 50, 110));
          cell.appendChild(el('span', 'metric-value', num(row.score)));
        }
        cells.push(cell);
      }
      addRow(t, cells);
    }
    box.appendChild(t);
  }
  return box;
}

function sanityTable(rows) {
  const t = table(['judge', 'position consistency', '', 'tie rate', 'first position wins', 'top verdict', 'questions', 'games', 'note']);
  for (const row of rows) {
    addRow(t, [row.judge, ciBar(100 * (row.consistency ?? NaN), null, null, [0, 100], null, 120), num(100 * row.consistency) + '%',
      num(100 * row.tie_rate) + '%', num(100 * row.first_position_rate) + '%',
      (row.label || '') + ' ' + num(100 * row.label_share) + '%', row.n_questions, row.n_games, row.note || ''], row.note ? 'warn-row' : '');
  }
  return t;
}

function instructionTable(spec) {
  const headers = ['instruction', 'n'];
  for (const model of spec.models) headers.push(model + ' strict', model + ' loose');
  const t = table(headers);
  for (const row of spec.rows) {
    const cells = [row.id, row.n];
    for (const cell of row.cells) { cells.push(cell ? num(cell[0]) : ''); cells.push(cell ? num(cell[1]) : ''); }
    addRow(t, cells, row.cells.some((c) => c && c[0] < 50) ? 'low' : '');
  }
  return t;
}

function runInfo(run) {
  const info = run.info || {};
  const lines = [];
  if (info.status) lines.push('status ' + info.status);
  if (info.n_questions != null) lines.push(info.n_questions + ' questions');
  if (info.samples != null) lines.push(info.samples + ' sample(s)');
  if (info.judge_kind) lines.push('judged ' + info.judge_kind);
  if (info.rule_suite) lines.push('rules ' + info.rule_suite);
  if (info.bench_path) lines.push('questions from ' + info.bench_path);
  if (info.failures) lines.push(info.failures + ' failed request(s)');
  const usage = info.usage_total;
  if (usage && typeof usage === 'object') lines.push((usage.requests ?? 0) + ' requests, ' + (usage.prompt_tokens ?? 0) + ' prompt + ' + (usage.completion_tokens ?? 0) + ' completion tokens');
  return el('p', 'run-info', lines.join(' \u00b7 '));
}

function renderSummary(main) {
  const page = el('article', 'summary');
  IX.runs.forEach((run, r) => {
    const summary = (IX.summary.runs || [])[r] || {};
    const section = el('section', 'run-summary');
    section.appendChild(el('h2', null, run.name + ' \u2014 ' + IX.benches[run.bench]));
    section.appendChild(runInfo(run));
    const rows = summary.leaderboard || [];
    if (rows.length) {
      section.appendChild(el('h3', 'board-title', summary.title || 'Leaderboard'));
      section.appendChild(leaderboardBlock(rows, summary));
    }
    if (summary.judge_accuracy && summary.judge_accuracy.length) {
      section.appendChild(el('h3', null, 'Judge accuracy'));
      section.appendChild(genericTable(summary.judge_accuracy));
    }
    if (summary.categories && summary.categories.length) {
      section.appendChild(el('h3', null, 'By category'));
      section.appendChild(categoryTable(summary.categories));
    }
    if (summary.sanity && summary.sanity.length) {
      section.appendChild(el('h3', null, 'Judge sanity (each question judged in both orders)'));
      section.appendChild(sanityTable(summary.sanity));
    }
    if (summary.instructions && summary.instructions.rows.length) {
      section.appendChild(el('h3', null, 'Per instruction (% followed)'));
      section.appendChild(instructionTable(summary.instructions));
    }
    if (summary.points && summary.points.length) {
      section.appendChild(el('h3', null, 'Graded points (rubric items and other point records)'));
      section.appendChild(genericTable(summary.points));
    }
    const notes = (run.notes || []).concat(summary.notes || []);
    if (notes.length) {
      const list = el('ul', 'notes');
      for (const note of notes) list.appendChild(el('li', null, note));
      section.appendChild(list);
    }
    page.appendChild(section);
  });
  main.replaceChildren(page);
}
