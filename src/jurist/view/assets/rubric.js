// A rubric judgment (HealthBench, WritingBench): every item the grader was asked about one answer, with its
// points or its score, whether it was met, and the grader's reply, under the answer's score, so "which
// items did the model miss?" is read at a glance. Criteria, replies and descriptions are untrusted text:
// text nodes only, as everywhere on this page.

function rubricNumber(value, digits) {
  return typeof value === 'number' && isFinite(value) ? String(+value.toFixed(digits)) : '\u2014';
}

// Criteria graded 1-10 (WritingBench's way) or points met (HealthBench's): the suite's grading, which the
// server sends with the judgment (view/index.py), never a benchmark's name.
function isCriteria(judged) { return judged.grading === 'criteria'; }

// Whether an item cost the answer: a positive HealthBench item not met, a negative one met (a penalty), a
// WritingBench criterion scored below the middle of its 1-10 scale.
function rubricMissed(item, writing) {
  if (item.status !== 'scored') return false;
  if (writing) return typeof item.score === 'number' && item.score < 5.5;
  return (item.points > 0 && item.met === false) || (item.points < 0 && item.met === true);
}

function rubricScoreLine(judged, items, writing) {
  const unscored = items.filter((item) => item.status !== 'scored').length;
  if (typeof judged.score !== 'number') {
    return 'answer not scored: ' + unscored + ' of ' + items.length + ' item(s) unscored (left out of every score)';
  }
  if (writing) return 'answer score ' + rubricNumber(judged.score, 2) + ' of 10 (mean of ' + items.length + ' criteria)';
  let possible = 0;
  let got = 0;
  for (const item of items) {
    if (item.points > 0) possible += item.points;
    if (item.met === true) got += item.points;
  }
  return 'answer score ' + rubricNumber(judged.score, 3) + ' (' + got + ' of ' + possible + ' possible points)';
}

function graderReply(item) {
  const cell = el('td', 'grader-reply');
  const said = typeof item.explanation === 'string' ? item.explanation : typeof item.reason === 'string' ? item.reason : null;
  cell.appendChild(el('div', said === null ? 'dim' : null, said === null ? (item.status === 'scored' ? '' : 'no readable grade in the reply') : said));
  const replies = [['reply', item.raw, item.raw_chars]];
  (Array.isArray(item.reasks) ? item.reasks : []).forEach((again, k) => {
    if (again && typeof again === 'object') replies.push(['re-ask ' + (k + 1), again.raw, again.raw_chars]);
  });
  for (const [name, text, chars] of replies) {
    if (typeof text !== 'string') continue;
    const details = el('details', 'reply');
    details.appendChild(el('summary', null, 'grader\u2019s ' + name + (chars ? ' (kept in part: ' + chars + ' characters in all)' : '')));
    details.appendChild(collapsible(text, 'judge-text'));
    cell.appendChild(details);
  }
  return cell;
}

function rubricBlock(judged, criteria) {
  const record = judged.record || {};
  const writing = isCriteria(judged);
  const items = record.items.filter((item) => item && typeof item === 'object' && !Array.isArray(item));
  const box = el('div', 'rubric');
  box.appendChild(el('div', 'rubric-score', rubricScoreLine(judged, items, writing)));
  const missed = items.filter((item) => rubricMissed(item, writing));
  const note = writing ? missed.length + ' of ' + items.length + ' criteria scored below 6' :
    missed.length + ' of ' + items.length + ' items missed (a positive item not met, or a penalty met)';
  const filter = el('label', 'check rubric-filter');
  const only = el('input');
  only.type = 'checkbox';
  filter.appendChild(only);
  filter.appendChild(el('span', null, 'show only these'));
  const line = el('div', 'rubric-missed');
  line.appendChild(el('span', missed.length ? 'warn' : 'dim', note));
  if (missed.length && missed.length < items.length) line.appendChild(filter);
  box.appendChild(line);
  const table = el('table', 'grid rubric-items');
  const head = el('tr');
  const titles = writing ? ['#', 'criterion', 'score', 'grader\u2019s reply'] : ['#', 'criterion', 'points', 'met', 'grader\u2019s reply'];
  for (const title of titles) head.appendChild(el('th', null, title));
  table.appendChild(el('thead')).appendChild(head);
  const body = table.appendChild(el('tbody'));
  items.forEach((item, k) => {
    const tr = el('tr', rubricMissed(item, writing) ? 'failing' : item.status !== 'scored' ? 'unscored' : 'kept');
    tr.appendChild(el('td', null, String(typeof item.item === 'number' ? item.item + 1 : k + 1)));
    const what = el('td', 'criterion');
    const name = writing ? item.name : item.criterion;
    what.appendChild(el('div', null, name == null ? '' : String(name)));
    const described = writing && criteria && typeof criteria[item.name] === 'string' ? criteria[item.name] : '';
    if (described) what.appendChild(el('div', 'dim criterion-text', described));
    const tags = Array.isArray(item.tags) ? item.tags : Array.isArray(item.c) ? item.c : [];
    if (tags.length) what.appendChild(el('div', 'dim criterion-tags', tags.join(' \u00b7 ')));
    tr.appendChild(what);
    if (writing) {
      tr.appendChild(el('td', 'item-score', item.status === 'scored' ? String(item.score) + ' / 10' : 'unscored'));
    } else {
      tr.appendChild(el('td', 'item-points', item.points == null ? '' : String(item.points)));
      const met = el('td', 'item-met');
      if (item.status !== 'scored') met.appendChild(el('span', 'dim', 'unscored'));
      else met.appendChild(el('span', rubricMissed(item, false) ? 'bad' : 'ok', item.met ? '\u2713 met' : '\u2717 not met'));
      tr.appendChild(met);
    }
    tr.appendChild(graderReply(item));
    body.appendChild(tr);
  });
  only.addEventListener('change', () => table.classList.toggle('only-missed', only.checked));
  box.appendChild(table);
  return box;
}
