// Markdown to DOM nodes for untrusted model and judge text.
// Nothing here parses HTML: every character of the source ends up in a text node, and the renderer only
// chooses which element (p, li, code, strong...) holds it. A script tag in an answer is therefore shown as
// the eight characters it is. Links are inert: their text is shown and their address beside it, with no
// href, so no click and no prefetch can leave the page. Images are never fetched; their alt text and
// address are shown instead.

const MD_MAX = 150000; // longer texts are shown verbatim in one <pre>: markdown adds nothing there
const MD_DEPTH = 8; // nesting limit for quotes and lists (a hostile answer may nest thousands deep)

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function mdRender(source, into) {
  const text = String(source == null ? '' : source);
  if (text.length > MD_MAX) {
    into.appendChild(el('pre', 'plain', text));
    return into;
  }
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  mdBlocks(lines, into, 0);
  return into;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function isTable(lines, i) {
  return i + 1 < lines.length && lines[i].indexOf('|') >= 0 && TABLE_SEP.test(lines[i + 1]) &&
    lines[i + 1].indexOf('-') >= 0;
}

function startsBlock(lines, i) {
  const line = lines[i];
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) ||
    ITEM.test(line) || isTable(lines, i);
}

function mdBlocks(lines, into, depth) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (!line.trim()) { i++; continue; }
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !(lines[i].trim().startsWith(fence) && !lines[i].trim().replace(/[`~]/g, ''))) {
        body.push(lines[i]);
        i++;
      }
      i++;
      into.appendChild(codeBlock(body.join('\n'), m[2]));
      continue;
    }
    if ((m = HEADING.exec(line))) {
      const heading = el('h' + Math.min(6, m[1].length + 2), 'md-h');
      mdInline(m[2], heading, 0);
      into.appendChild(heading);
      i++;
      continue;
    }
    if (RULE.test(line)) { into.appendChild(el('hr')); i++; continue; }
    if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && QUOTE.test(lines[i])) inner.push(lines[i++].replace(/^ {0,3}>\s?/, ''));
      const quote = el('blockquote');
      if (depth < MD_DEPTH) mdBlocks(inner, quote, depth + 1); else quote.textContent = inner.join('\n');
      into.appendChild(quote);
      continue;
    }
    if (ITEM.test(line)) { i = mdList(lines, i, into, depth); continue; }
    if (isTable(lines, i)) { i = mdTable(lines, i, into); continue; }
    const para = [line];
    i++;
    while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) para.push(lines[i++]);
    const p = el('p');
    mdInline(para.join('\n'), p, 0);
    into.appendChild(p);
  }
}

function mdList(lines, start, into, depth) {
  const first = ITEM.exec(lines[start]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const list = el(ordered ? 'ol' : 'ul');
  if (ordered && parseInt(first[2], 10) !== 1) list.start = parseInt(first[2], 10);
  let item = null;
  let buffer = [];
  const flush = () => { if (item) { mdItem(buffer, item, depth); list.appendChild(item); } };
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const m = ITEM.exec(line);
    const lead = line.search(/\S/);
    if (m && m[1].length === indent && /\d/.test(m[2]) === ordered) {
      flush();
      item = el('li');
      buffer = [m[3]];
      i++;
      continue;
    }
    if (!line.trim()) {
      const next = lines[i + 1];
      if (next !== undefined && next.trim() && next.search(/\S/) > indent) { buffer.push(''); i++; continue; }
      const nextItem = next !== undefined ? ITEM.exec(next) : null;
      if (nextItem && nextItem[1].length === indent && /\d/.test(nextItem[2]) === ordered) { i++; continue; }
      break;
    }
    if (lead > indent) { buffer.push(line.slice(Math.min(lead, indent + 2))); i++; continue; }
    if (m || startsBlock(lines, i)) break;
    buffer.push(line); // a lazy continuation line of the item's paragraph
    i++;
  }
  flush();
  into.appendChild(list);
  return i;
}

function mdItem(buffer, item, depth) {
  if (buffer.length === 1 || depth >= MD_DEPTH) { mdInline(buffer.join('\n'), item, 0); return; }
  const holder = el('div');
  mdBlocks(buffer, holder, depth + 1);
  const firstChild = holder.firstChild;
  if (firstChild && firstChild.tagName === 'P') { // a tight item: its first paragraph is the item's text
    while (firstChild.firstChild) item.appendChild(firstChild.firstChild);
    holder.removeChild(firstChild);
  }
  while (holder.firstChild) item.appendChild(holder.firstChild);
}

function tableCells(line) {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

function mdTable(lines, start, into) {
  const table = el('table', 'md-table');
  const head = el('tr');
  for (const cell of tableCells(lines[start])) { const th = el('th'); mdInline(cell, th, 0); head.appendChild(th); }
  table.appendChild(el('thead')).appendChild(head);
  const body = table.appendChild(el('tbody'));
  let i = start + 2;
  while (i < lines.length && lines[i].trim() && lines[i].indexOf('|') >= 0) {
    const tr = el('tr');
    for (const cell of tableCells(lines[i])) { const td = el('td'); mdInline(cell, td, 0); tr.appendChild(td); }
    body.appendChild(tr);
    i++;
  }
  const wrap = el('div', 'md-table-wrap');
  wrap.appendChild(table);
  into.appendChild(wrap);
  return i;
}

const ESCAPABLE = '\\`*_{}[]()#+-.!|~<>"\'';
const EMPHASIS = [['**', 'strong'], ['__', 'strong'], ['~~', 'del'], ['*', 'em'], ['_', 'em']];
const SEARCH_WINDOW = 4000; // how far a closing delimiter is looked for: keeps hostile input linear-ish

function mdInline(text, into, depth) {
  let buffer = '';
  const flush = () => { if (buffer) { into.appendChild(document.createTextNode(buffer)); buffer = ''; } };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length && ESCAPABLE.indexOf(text[i + 1]) >= 0) {
      buffer += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      let run = 1;
      while (text[i + run] === '`') run++;
      const fence = '`'.repeat(run);
      const close = text.indexOf(fence, i + run);
      if (close > 0 && close - i < SEARCH_WINDOW * 4) {
        flush();
        into.appendChild(el('code', 'md-code', text.slice(i + run, close).replace(/^ ([\s\S]*) $/, '$1')));
        i = close + run;
      } else {
        buffer += fence;
        i += run;
      }
      continue;
    }
    if ((c === '[' || (c === '!' && text[i + 1] === '[')) && depth < 4) {
      const link = parseLink(text, c === '!' ? i + 1 : i);
      if (link) {
        flush();
        into.appendChild(c === '!' ? imageRef(link) : linkRef(link, depth));
        i = link.end;
        continue;
      }
    }
    if ((c === '*' || c === '_' || c === '~') && depth < 6) {
      const span = emphasis(text, i);
      if (span) {
        flush();
        const node = el(span.tag);
        mdInline(text.slice(span.start, span.close), node, depth + 1);
        into.appendChild(node);
        i = span.close + span.mark.length;
        continue;
      }
    }
    buffer += c;
    i++;
  }
  flush();
}

function emphasis(text, i) {
  for (const [mark, tag] of EMPHASIS) {
    if (!text.startsWith(mark, i)) continue;
    const start = i + mark.length;
    if (start >= text.length || /\s/.test(text[start])) return null;
    if (mark[0] === '_' && i > 0 && /\w/.test(text[i - 1])) return null; // snake_case is not emphasis
    let close = text.indexOf(mark, start + 1);
    while (close > 0 && close - start < SEARCH_WINDOW) {
      const before = text[close - 1];
      const after = text[close + mark.length];
      const okEnd = !/\s/.test(before) && (mark[0] !== '_' || !after || !/\w/.test(after));
      const single = mark.length === 1 && text[close + 1] === mark; // "*a **b** c*": skip the pair
      if (okEnd && !single) return { tag, mark, start, close };
      close = text.indexOf(mark, close + (single ? 2 : 1));
    }
    return null;
  }
  return null;
}

function parseLink(text, open) {
  let depth = 0;
  let close = -1;
  for (let k = open; k < text.length && k - open < SEARCH_WINDOW; k++) {
    if (text[k] === '\\') { k++; continue; }
    if (text[k] === '[') depth++;
    else if (text[k] === ']' && --depth === 0) { close = k; break; }
  }
  if (close < 0 || text[close + 1] !== '(') return null;
  const end = text.indexOf(')', close + 2);
  if (end < 0 || end - close > 2048) return null;
  const target = text.slice(close + 2, end).trim().split(/\s+/)[0] || '';
  return { label: text.slice(open + 1, close), url: target.replace(/^<|>$/g, ''), end: end + 1 };
}

function linkRef(link, depth) {
  // Inert on purpose: no href. The address is shown so a reader can judge and copy it.
  const span = el('span', 'md-link');
  mdInline(link.label, span, depth + 1);
  span.title = link.url;
  const where = el('span', 'md-url', ' \u27e8' + link.url + '\u27e9');
  const both = el('span');
  both.appendChild(span);
  both.appendChild(where);
  return both;
}

function imageRef(link) {
  return el('span', 'md-img', '[image: ' + (link.label || 'no description') + '] \u27e8' + link.url + '\u27e9');
}

// --- code highlighting: a tokenizer, not a parser; good enough to read code, never executes anything.
const KEYWORDS = new Set(('abstract and as assert async await break case catch class const continue def ' +
  'default del do elif else enum except export extends false final finally fn for from func function go ' +
  'if impl import in interface is lambda let loop match mod mut new nil none not null or package pass ' +
  'private protected pub public raise return self select static struct super switch this throw throws ' +
  'true try type typeof use var void where while with yield int float double char bool string long ' +
  'unsigned signed include define begin end then fi done esac local echo println printf print').split(' '));
const HASH_COMMENTS = new Set(['python', 'py', 'bash', 'sh', 'shell', 'zsh', 'ruby', 'rb', 'r', 'yaml', 'yml',
  'toml', 'perl', 'pl', 'dockerfile', 'make', 'makefile', 'julia', 'jl', 'nim', 'elixir', 'ex', 'powershell', 'ps1']);
const DASH_COMMENTS = new Set(['sql', 'lua', 'haskell', 'hs', 'ada', 'plsql', 'postgresql', 'mysql', 'sqlite']);

function tokenPattern(lang) {
  const l = (lang || '').toLowerCase();
  const comment = HASH_COMMENTS.has(l) ? '#[^\\n]*' : DASH_COMMENTS.has(l) ? '--[^\\n]*' :
    '\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?\\*\\/';
  return new RegExp('(' + comment + ')|("(?:[^"\\\\\\n]|\\\\.)*"|\'(?:[^\'\\\\\\n]|\\\\.)*\')|' +
    '\\b(0x[0-9a-fA-F]+|\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)\\b|\\b([A-Za-z_][\\w]*)\\b', 'g');
}

function codeBlock(body, lang) {
  const pre = el('pre', 'md-pre');
  const code = el('code');
  if (lang) pre.dataset.lang = lang;
  if (body.length > 60000) {
    code.textContent = body;
  } else {
    const pattern = tokenPattern(lang);
    let last = 0;
    let m;
    while ((m = pattern.exec(body))) {
      const kind = m[1] ? 'tok-c' : m[2] ? 'tok-s' : m[3] ? 'tok-n' : KEYWORDS.has(m[4]) ? 'tok-k' : '';
      if (!kind) continue;
      if (m.index > last) code.appendChild(document.createTextNode(body.slice(last, m.index)));
      code.appendChild(el('span', kind, m[0]));
      last = m.index + m[0].length;
    }
    if (last < body.length) code.appendChild(document.createTextNode(body.slice(last)));
  }
  pre.appendChild(code);
  return pre;
}
