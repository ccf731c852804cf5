// The judge card tab: per run, per judge, each probe's estimate, interval, n, threshold and whether it is
// flagged (flagged probes stand out, with their warning line), and each probe's items: the answers the
// judge was shown before and after the probe changed them, and both verdicts. Answers, prompts and
// criteria are untrusted text: text nodes only, as everywhere on this page. A probe's items are drawn
// when their list is opened (a card may hold a few hundred answers).

const VERDICT_NAMES = {
  before: 'judge\u2019s verdict (stored)', after: 'probe\u2019s verdict', value: 'value', game: 'game',
  padded: 'padded', planted: 'note planted in', shown_first: 'shown first', p_first: 'P(first better)',
  p_first_swapped: 'P(first better), swapped', p_model: 'P(model better)', outcome: 'swapped game\u2019s verdict', item: 'rubric item',
};

function cardNumber(value) { return typeof value === 'number' && isFinite(value) ? String(+value.toFixed(3)) : value == null ? '\u2014' : String(value); }

function probeState(probe) {
  if (probe.flagged) return el('span', 'bad flag', 'FLAGGED');
  if (!probe.n) return el('span', 'dim', 'not measured');
  return el('span', 'ok', 'ok');
}

function probeScale(probe) {
  return probe.direction === 'both' ? [-1, 1] : [0, 1];
}

function thresholdText(probe) {
  if (typeof probe.threshold !== 'number') return '';
  if (probe.direction === 'both') return 'beyond \u00b1' + probe.threshold.toFixed(2);
  return (probe.direction === 'below' ? 'below ' : 'above ') + probe.threshold.toFixed(2);
}

function probeTable(judge) {
  const t = table(['probe', 'estimate', '95% interval', '', 'n', 'flagged when', 'state', 'note']);
  for (const probe of judge.probes) {
    const extra = Object.keys(probe.extra || {}).map((key) => key + ' ' + cardNumber(probe.extra[key]));
    const note = [probe.note || '', extra.join(', ')].filter((part) => part).join('; ');
    const reference = probe.direction === 'both' ? 0 : probe.threshold;
    const tr = addRow(t, [probe.probe, cardNumber(probe.estimate),
      typeof probe.ci_low === 'number' ? '[' + probe.ci_low.toFixed(2) + ', ' + probe.ci_high.toFixed(2) + ']' : '\u2014',
      ciBar(probe.estimate, probe.ci_low, probe.ci_high, probeScale(probe), reference, 160, 2),
      probe.n, thresholdText(probe), probeState(probe), note], probe.flagged ? 'flagged' : '');
    tr.dataset.probe = probe.probe;
    tr.title = probe.title + (probe.meaning ? ': ' + probe.meaning : '');
  }
  return t;
}

function verdictLine(item) {
  const line = el('div', 'item-verdicts');
  const verdicts = item.verdicts || {};
  for (const key of Object.keys(verdicts)) {
    const part = el('span', 'verdict verdict-' + key);
    part.appendChild(el('span', 'dim', (VERDICT_NAMES[key] || key) + ' '));
    const value = key === 'item' && typeof verdicts[key] === 'number' ? verdicts[key] + 1 : verdicts[key]; // 1-based, as the question page
    part.appendChild(el('span', 'label', cardNumber(value)));
    line.appendChild(part);
  }
  return line;
}

function textBlock(cls, original, added, replaced) {
  const pre = el('pre', 'plain ' + cls);
  if (replaced != null) { pre.appendChild(el('span', 'added', replaced)); return pre; }
  pre.appendChild(document.createTextNode(original));
  if (added != null) pre.appendChild(el('span', 'added', added));
  return pre;
}

function sideBlock(side, answers, item) {
  const box = el('div', 'probe-side');
  const where = item.positions ? Object.keys(item.positions).find((pos) => item.positions[pos] === side.model) : null;
  const changed = side.added != null ? 'added after the answer (highlighted)' : side.replaced != null ? 'replaced whole' : 'unchanged';
  box.appendChild(el('div', 'side-head', side.model + (where ? ' (position ' + where + ')' : '') + ' \u2014 ' + changed));
  const original = side.key != null && typeof answers[side.key] === 'string' ? answers[side.key] : '';
  const pair = el('div', 'side-texts' + (changed === 'unchanged' ? '' : ' two'));
  const before = el('div');
  before.appendChild(el('div', 'dim', 'original'));
  before.appendChild(textBlock('orig', original, null, null));
  pair.appendChild(before);
  if (changed !== 'unchanged') {
    const after = el('div');
    after.appendChild(el('div', 'dim', 'as the probe showed it'));
    after.appendChild(textBlock('pert', original, side.added, side.replaced));
    pair.appendChild(after);
  }
  box.appendChild(pair);
  return box;
}

function itemBlock(item, card) {
  const box = el('div', 'probe-item');
  box.appendChild(el('div', 'item-head', item.uid + ' \u00b7 ' + item.model + (item.sample ? ' \u00b7 sample ' + item.sample : '')));
  box.appendChild(verdictLine(item));
  if (item.positions) box.appendChild(el('div', 'dim', 'A = ' + item.positions.A + ', B = ' + item.positions.B));
  if (item.criterion != null) box.appendChild(el('div', 'item-criterion', 'criterion: ' + item.criterion));
  if (item.note) box.appendChild(el('div', 'dim item-note', item.note));
  const prompt = item.prompt != null ? (card.prompts || {})[item.prompt] : null;
  if (typeof prompt === 'string') {
    const details = el('details', 'item-prompt');
    details.appendChild(el('summary', null, 'question'));
    details.appendChild(el('pre', 'plain', prompt));
    box.appendChild(details);
  }
  const sides = (item.sides || []).slice();
  if (item.positions) sides.sort((x, y) => (x.model === item.positions.A ? 0 : 1) - (y.model === item.positions.A ? 0 : 1));
  for (const side of sides) box.appendChild(sideBlock(side, card.answers || {}, item));
  return box;
}

function probeItems(probe, card) {
  const details = el('details', 'probe-items');
  details.dataset.probe = probe.probe;
  details.appendChild(el('summary', probe.flagged ? 'warn' : null,
    probe.probe + ': ' + probe.items.length + ' item(s) \u2014 original and probed answers, both verdicts'));
  const list = el('div', 'item-list');
  details.appendChild(list);
  details.addEventListener('toggle', () => {
    if (details.open && !list.childNodes.length) for (const item of probe.items) list.appendChild(itemBlock(item, card));
  });
  return details;
}

function judgeCard(judge, card) {
  const box = el('div', 'judge-card' + (judge.probes.some((p) => p.flagged) ? ' has-flag' : ''));
  box.dataset.judge = judge.judge;
  box.appendChild(el('h3', null, 'judge ' + judge.judge + (judge.kind ? ' (' + judge.kind + ')' : '')));
  box.appendChild(el('p', 'dim', (judge.probe_requests ?? 0) + ' probe request(s) of ' + (judge.probe_budget ?? 0) +
    ' allowed (10% of ' + (judge.judge_requests ?? 0) + ' judge requests)' +
    (judge.failed_probe_requests ? ', ' + judge.failed_probe_requests + ' failed' : '')));
  for (const line of judge.warnings || []) box.appendChild(el('p', 'warn card-warning', 'warning: ' + line));
  if ((judge.notes || []).length) {
    const notes = el('ul', 'notes');
    for (const note of judge.notes) notes.appendChild(el('li', null, note));
    box.appendChild(notes);
  }
  box.appendChild(probeTable(judge));
  for (const probe of judge.probes) if ((probe.items || []).length) box.appendChild(probeItems(probe, card));
  return box;
}

function renderCard(main) {
  const page = el('article', 'summary card-view');
  IX.runs.forEach((run, r) => {
    const card = (IX.cards || [])[r] || { note: 'no judge card in this run' };
    const section = el('section', 'run-summary run-card');
    section.appendChild(el('h2', null, run.name + ' \u2014 ' + IX.benches[run.bench]));
    if (card.note || !card.judges) {
      section.appendChild(el('p', 'dim no-card', card.note || 'no judge card in this run'));
    } else {
      section.appendChild(el('p', 'dim', 'probe items drawn with seed ' + card.seed + ', up to ' + card.sample +
        ' per probe; a probe is flagged when its whole interval lies beyond its threshold (docs/judge-card.md)'));
      for (const judge of card.judges) section.appendChild(judgeCard(judge, card));
    }
    page.appendChild(section);
  });
  main.replaceChildren(page);
}
