// The page's data: the index (read at once), payloads (one per question row, read when needed) and
// full-text search. In a written file the payloads sit in JSON data blocks after
// this script, so the list paints before the browser has even finished reading them; with --serve they
// are fetched from the same 127.0.0.1 server, one row at a time, and search runs on the server.

const IX = JSON.parse(document.getElementById('jurist-index').textContent);
const SERVE = IX.mode === 'serve';
const N = IX.rows.uid.length;
const [NR, NM, NJ] = IX.dims;
const CELL = decodeCodes(IX.cells);
const ANS = decodeCodes(IX.ans);
const ROW_CAT = Int32Array.from(IX.rows.cat);
const ROW_BENCH = Int32Array.from(IX.rows.bench);
const PERF = { marks: {}, filterMs: [], searchMs: [], hayMs: null };
window.__jurist = { perf: PERF, rows: N };

function decodeCodes(text) {
  const out = new Uint8Array(text.length);
  for (let k = 0; k < text.length; k++) out[k] = text.charCodeAt(k) - 35;
  return out;
}

function cellCode(i, r, m, j) { return CELL[((i * NR + r) * NM + m) * NJ + j]; }
function answerCode(i, r, m) { return ANS[(i * NR + r) * NM + m]; }

// --- verdict codes (jurist/view/codes.py): pairwise 1..49, points 50..53, other 54, failed 55
const GRADE_SIGN = [null, 1, 1, 0, -1, -1, null];
const GRADE_MARK = ['', '\u226b', '>', '=', '<', '\u226a', '?'];
const GRADE_NAME = ['', 'much better', 'better', 'tie', 'worse', 'much worse', 'no verdict'];
function games(code) { return code >= 1 && code <= 49 ? [Math.floor((code - 1) / 7), (code - 1) % 7] : null; }
function isPoint(code) { return code >= 50 && code <= 53; }

// The verdict of one cell in one word: win, loss, tie, split (the games disagree), invalid, pass, part,
// fail, unscored, other, failed, or '' when there is nothing.
function outcome(code) {
  const g = games(code);
  if (g) {
    if (g[0] === 6 || g[1] === 6) return 'invalid';
    const signs = g.filter((x) => x > 0).map((x) => GRADE_SIGN[x]);
    if (!signs.length) return '';
    const total = signs.reduce((a, b) => a + b, 0);
    if (signs.length === 2 && signs[0] * signs[1] < 0) return 'split';
    return total > 0 ? 'win' : total < 0 ? 'loss' : 'tie';
  }
  return ['pass', 'part', 'fail', 'unscored', 'other', 'failed'][code - 50] || '';
}

function swapDisagrees(code) {
  const g = games(code);
  return !!g && g[0] > 0 && g[1] > 0 && g[0] < 6 && g[1] < 6 && GRADE_SIGN[g[0]] !== GRADE_SIGN[g[1]];
}

function judgesDisagree(i, r, m) {
  let seen = null;
  for (let j = 0; j < NJ; j++) {
    const o = outcome(cellCode(i, r, m, j));
    if (!o || o === 'invalid' || o === 'failed' || o === 'other') continue;
    if (seen === null) seen = o; else if (seen !== o) return true;
  }
  return false;
}

// --- payloads
const CHUNK = IX.chunk || 1;
const chunkCache = new Map();
const domReady = new Promise((resolve) => {
  if (document.readyState !== 'loading') resolve(); else document.addEventListener('DOMContentLoaded', () => resolve());
});

function chunkText(k) {
  const found = document.getElementsByClassName('jurist-chunk')[k];
  return found ? found.textContent : null;
}

async function loadPayload(i) {
  if (SERVE) {
    const res = await fetch('api/row/' + i, { credentials: 'same-origin' });
    if (!res.ok) throw new Error('row ' + i + ': HTTP ' + res.status);
    return res.json();
  }
  const k = Math.floor(i / CHUNK);
  let rows = chunkCache.get(k);
  if (!rows) {
    let text = chunkText(k);
    if (text === null) { await domReady; text = chunkText(k); }
    if (text === null) throw new Error('row ' + i + ' is not in this file');
    rows = JSON.parse(text);
    chunkCache.set(k, rows);
    if (chunkCache.size > 8) chunkCache.delete(chunkCache.keys().next().value);
  }
  return rows[i - k * CHUNK];
}

// --- full-text search: every word of the query must occur (case-insensitive) in the row's text
const HAY = SERVE ? null : new Array(N);
let hayReady = null;
const searchCache = new Map();

function collectStrings(value, out, depth) {
  if (depth > 6 || value == null) return;
  if (typeof value === 'string') { if (value.length > 24 || value.indexOf(' ') >= 0) out.push(value); return; }
  if (Array.isArray(value)) { for (const item of value) collectStrings(item, out, depth + 1); return; }
  if (typeof value === 'object') {
    for (const key of Object.keys(value)) {
      if (key !== 'key' && !key.endsWith('_hash')) collectStrings(value[key], out, depth + 1);
    }
  }
}

function rowText(payload) {
  const parts = [payload.uid, payload.prompt || ''];
  for (const run of payload.runs) {
    if (!run) continue;
    for (const model of Object.keys(run.answers)) parts.push(String(run.answers[model].answer || ''));
    for (const judged of run.judged) collectStrings(judged.record, parts, 0);
  }
  return parts.join('\n').toLowerCase();
}

function buildHay(onProgress) {
  if (hayReady) return hayReady;
  hayReady = domReady.then(() => new Promise((resolve) => {
    const started = performance.now();
    const chunks = document.getElementsByClassName('jurist-chunk');
    let k = 0;
    const step = () => {
      const t0 = performance.now();
      while (k < chunks.length && performance.now() - t0 < 30) {
        for (const payload of JSON.parse(chunks[k].textContent)) HAY[payload.row] = rowText(payload);
        k++;
      }
      if (onProgress) onProgress(k, chunks.length);
      if (k < chunks.length) setTimeout(step, 0);
      else { PERF.hayMs = performance.now() - started; resolve(); }
    };
    step();
  }));
  return hayReady;
}

// indexOf looks for a pattern's first character, then compares: a word that starts with a common letter
// ("s004321") is compared at every "s" of 100 MB. Searching first for the word's tail from its rarest
// character ("004321") finds the same rows, and the whole word is then checked in those rows only.
let charCounts = null;
function rarity(text) {
  if (!charCounts) {
    charCounts = new Map();
    for (let i = 0; i < Math.min(N, 200); i++) {
      const hay = HAY[i] || '';
      for (let k = 0; k < hay.length; k += 3) charCounts.set(hay[k], (charCounts.get(hay[k]) || 0) + 1);
    }
  }
  return charCounts.get(text[0]) || 0;
}

function anchor(word) {
  let best = 0;
  for (let k = 1; k + 3 <= word.length; k++) if (rarity(word[k]) < rarity(word[best])) best = k;
  return word.slice(best);
}

function queryWords(query) {
  return query.toLowerCase().split(/\s+/).filter((w) => w.length > 0).slice(0, 12);
}

// A Uint8Array mask of the rows whose text holds every word of the query.
async function searchMask(query, onProgress) {
  const key = queryWords(query).join(' ');
  if (searchCache.has(key)) return searchCache.get(key);
  const mask = new Uint8Array(N);
  if (SERVE) {
    const res = await fetch('api/search?q=' + encodeURIComponent(key), { credentials: 'same-origin' });
    if (!res.ok) throw new Error('search: HTTP ' + res.status);
    const t0 = performance.now();
    for (const i of (await res.json()).rows) if (i >= 0 && i < N) mask[i] = 1;
    PERF.searchMs.push(performance.now() - t0);
  } else {
    await buildHay(onProgress);
    const t0 = performance.now();
    const words = key.split(' ').map((word) => [anchor(word), word]);
    words.sort((x, y) => rarity(x[0]) - rarity(y[0]));
    for (let i = 0; i < N; i++) {
      const hay = HAY[i];
      if (hay === undefined) continue;
      let ok = true;
      for (const [part, word] of words) {
        if (hay.indexOf(part) < 0 || (part !== word && hay.indexOf(word) < 0)) { ok = false; break; }
      }
      if (ok) mask[i] = 1;
    }
    PERF.searchMs.push(performance.now() - t0);
  }
  searchCache.set(key, mask);
  if (searchCache.size > 20) searchCache.delete(searchCache.keys().next().value);
  return mask;
}
