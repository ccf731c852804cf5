// Start-up and routing: #/ the list, #/q/<row> a question, #/summary the summary, #/card the judge card. Only the location's
// fragment changes, so moving around never loads anything.

function setTab(name) {
  for (const link of document.querySelectorAll('.tabs a')) link.classList.toggle('current', link.dataset.tab === name);
}

function route() {
  const main = document.getElementById('main');
  const hash = location.hash;
  const question = /^#\/q\/(\d+)$/.exec(hash);
  if (question && +question[1] < N) {
    setTab('list');
    renderQuestion(main, +question[1]);
  } else if (hash === '#/summary') {
    setTab('summary');
    renderSummary(main);
  } else if (hash === '#/card') {
    setTab('card');
    renderCard(main);
  } else {
    setTab('list');
    const back = S.current;
    renderListView(main).then(() => {
      const at = S.matches.indexOf(back);
      if (back >= 0 && at >= 0 && listBox) { listBox.scrollTop = Math.max(0, at * ROW_H - 2 * ROW_H); drawRows(); }
    });
  }
}

function header() {
  const top = document.getElementById('top');
  const brand = el('span', 'brand', 'jurist view');
  const runs = el('span', 'runs', IX.runs.map((run) => run.name).join(' \u00b7 '));
  const tabs = el('nav', 'tabs');
  for (const [name, label, href] of [['list', 'Questions', '#/'], ['summary', 'Summary', '#/summary'], ['card', 'Judge card', '#/card']]) {
    const link = el('a', null, label);
    link.href = href;
    link.dataset.tab = name;
    tabs.appendChild(link);
  }
  top.replaceChildren(brand, tabs, runs);
}

document.addEventListener('keydown', (event) => {
  const target = event.target;
  if (target && (target.tagName === 'INPUT' || target.tagName === 'SELECT' || target.tagName === 'TEXTAREA')) return;
  if (event.key === '/') { const box = document.getElementById('search'); if (box) { event.preventDefault(); box.focus(); } }
  if (S.current >= 0 && /^#\/q\//.test(location.hash)) {
    const where = neighbours(S.current);
    if ((event.key === 'ArrowRight' || event.key === 'j') && where.next >= 0) location.hash = '#/q/' + where.next;
    if ((event.key === 'ArrowLeft' || event.key === 'k') && where.prev >= 0) location.hash = '#/q/' + where.prev;
    if (event.key === 'Escape') location.hash = '#/';
  }
});

initColumns();
S.matches = Int32Array.from({ length: N }, (_, k) => k); // a question opened first walks every row
header();
window.addEventListener('hashchange', route);
route();
PERF.marks.listShown = performance.now();
requestAnimationFrame(() => { PERF.marks.firstFrame = performance.now(); });
if (!SERVE) domReady.then(() => setTimeout(() => buildHay(), 50));
