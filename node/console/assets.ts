/**
 * The console's stylesheet and script, served by the node itself (/assets/…): no request leaves for
 * another site. The pages work without the script (live ones refresh themselves); it only adds live
 * updates — Server-Sent Events replacing the sections the server renders on the live page, the page
 * fetched again and its live parts swapped on others — and a confirmation before destructive actions.
 */

/** Colours chosen for contrast: every text colour reaches at least 4.5:1 on its background. */
export const CONSOLE_CSS = `
:root{--fg:#1a1a1a;--muted:#4a4a4a;--bg:#fff;--line:#d0d0d0;--link:#0b57d0;--bad:#b00020;--ok:#1b6e35;--warn:#8a5300;--head:#1f2937}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:var(--fg);background:var(--bg)}
a{color:var(--link)} a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:3px solid #f59e0b;outline-offset:1px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem}.skip:focus{left:.5rem}
header{background:var(--head);color:#fff;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.5rem;padding:.6rem 1.2rem}
header a{color:#fff} .brand{font-weight:700}
header nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.2rem 1rem;margin:0;padding:0}
header nav a{text-decoration:none;padding:.2rem .1rem;border-bottom:2px solid transparent} header nav a[aria-current=page]{border-bottom-color:#fff}
.who{margin-left:auto;font-size:.9rem}
main{padding:1rem 1.2rem;max-width:1400px}
footer{padding:1rem 1.2rem;color:var(--muted);font-size:.85rem;border-top:1px solid var(--line)}
h1{font-size:1.35rem;margin:.2rem 0 .8rem} h2{font-size:1.1rem;margin:1.4rem 0 .5rem}
table{border-collapse:collapse;width:100%} td,th{padding:.3rem .55rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{font-weight:600} .num{text-align:right;font-variant-numeric:tabular-nums}
.table-wrap{overflow-x:auto}
.bad{color:var(--bad);font-weight:600} .ok{color:var(--ok)} .warn{color:var(--warn)} .muted{color:var(--muted)}
.notice{padding:.6rem .8rem;border:1px solid var(--line);border-left:5px solid var(--link);margin:.5rem 0 1rem;background:#f5f8ff}
.notice.failed{border-left-color:var(--bad);background:#fff5f6}
.readonly{border-left-color:var(--warn);background:#fffaf0}
code,pre{font:13px/1.4 ui-monospace,monospace} pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.5rem;margin:0}
form.inline{display:inline} form.search{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end;margin:.5rem 0 1rem}
label{display:flex;flex-direction:column;font-size:.85rem;gap:.15rem}
input,select,textarea,button{font:inherit;padding:.3rem .45rem;border:1px solid #767676;border-radius:3px;background:#fff;color:var(--fg)}
button{background:#f2f2f2;cursor:pointer} button.danger{border-color:var(--bad);color:var(--bad)}
textarea{width:100%;min-height:8rem;font:13px ui-monospace,monospace}
.tabs{display:flex;flex-wrap:wrap;gap:.3rem;list-style:none;padding:0;margin:.5rem 0}
.tabs a{display:inline-block;padding:.25rem .7rem;border:1px solid var(--line);border-radius:3px;text-decoration:none}
.tabs a[aria-current=page]{background:var(--head);color:#fff;border-color:var(--head)}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0}
.diff{max-height:32rem;overflow:auto} .diff .add{color:var(--ok);background:#eefbf1;display:block} .diff .del{color:var(--bad);background:#fff1f2;display:block} .diff .same{display:block}
#config-text{min-height:24rem}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:1rem}
figure{margin:0;border:1px solid var(--line);padding:.5rem} figcaption{font-weight:600;margin-bottom:.3rem}
.chart svg{width:100%;height:auto;display:block} .chart-now{margin:.2rem 0 0;font-size:.85rem} .key{white-space:nowrap;margin-right:.6rem}
.k-blue{color:#0b57d0} .k-red{color:#b00020} .k-purple{color:#6a1b9a} .k-green{color:#1b6e35} .k-teal{color:#00695c}
.charts+.charts{margin-top:1rem}
.flow svg{max-width:100%;height:auto} .flow{overflow-x:auto}
.legend{display:flex;flex-wrap:wrap;gap:1rem;font-size:.85rem}
.swatch{display:inline-block;width:.8rem;height:.8rem;border:1px solid #555;vertical-align:middle;margin-right:.3rem}
.swatch.ok{background:#e6f4ea;border-color:#1b6e35} .swatch.warn{background:#fff4e0;border-color:#8a5300} .swatch.bad{background:#fde7ea;border-color:#b00020}
.swatch.source{background:#eef2ff;border-color:#3949ab} .swatch.channel{background:#fff;border-style:dashed} .swatch.remote{background:#f1f8f6;border-color:#00695c;border-style:dashed}
.strip{list-style:none;display:flex;flex-wrap:wrap;gap:.5rem;margin:.3rem 0 .6rem;padding:0}
.strip li{border:1px solid var(--line);border-radius:4px;min-width:5.5rem;background:#fafafa}
.strip .tile{display:block;padding:.25rem .55rem} .strip a.tile{text-decoration:none;color:var(--fg)} .strip a.tile:hover .tile-label{text-decoration:underline}
.tile-value{display:block;font-size:1.1rem;font-weight:700;font-variant-numeric:tabular-nums} .tile-label{display:block;font-size:.8rem;color:var(--muted)}
.live-grid{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:0 1.5rem;align-items:start}
.live-grid h2:first-child,.live-side h2:first-child{margin-top:.4rem}
.live-side .charts{grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:.6rem} .live-side figcaption{font-size:.85rem}
.live-side h3{font-size:1rem;margin:.6rem 0 .3rem}
td.figures div{display:inline;font-size:.85rem} td.figures div+div::before{content:" · ";color:var(--muted)}
details.actors{margin:1rem 0} details.actors summary{cursor:pointer;font-weight:600;font-size:1.1rem}
th.select,td.select{width:2rem;text-align:center} td.select input,th.select input{width:1.1rem;height:1.1rem;margin:0}
.bulk{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}
td.last-error{max-width:28rem}
@media (max-width:1100px){.live-grid{grid-template-columns:minmax(0,1fr)}}
${Array.from({ length: 9 }, (_, d) => `td.depth-${d}{padding-left:${(0.55 + d * 1.2).toFixed(2)}rem}`).join(' ')}
@media (max-width:640px){.flow svg{max-width:none} main{padding:.6rem} td,th{padding:.25rem .35rem} .who{margin-left:0}}
`;

export const CONSOLE_JS = `
(function () {
  'use strict';
  // destructive actions ask first (without the script the form is sent at once): the button's question, else the form's
  document.addEventListener('submit', function (ev) {
    var f = ev.target;
    var b = ev.submitter;
    var ask = (b && b.dataset && b.dataset.confirm) || (f && f.dataset && f.dataset.confirm);
    if (ask && !window.confirm(ask)) ev.preventDefault();
  });
  // "select all" of a list with checkboxes (hidden without the script: the boxes work alone)
  document.querySelectorAll('[data-select-all]').forEach(function (all) {
    var boxes = function () { return document.querySelectorAll('input.' + all.getAttribute('data-select-all')); };
    all.hidden = false;
    all.addEventListener('change', function () { boxes().forEach(function (b) { b.checked = all.checked; }); });
    document.addEventListener('change', function (ev) {
      if (ev.target === all || !ev.target.classList || !ev.target.classList.contains(all.getAttribute('data-select-all'))) return;
      var list = Array.prototype.slice.call(boxes());
      all.checked = list.length > 0 && list.every(function (b) { return b.checked; });
      all.indeterminate = !all.checked && list.some(function (b) { return b.checked; });
    });
  });
  // live sections: the server renders them; the stream sends their new markup by id
  var live = document.querySelector('[data-stream]');
  if (live && window.EventSource) {
    var source = new EventSource(live.getAttribute('data-stream'));
    source.addEventListener('sections', function (ev) {
      var sections = JSON.parse(ev.data);
      Object.keys(sections).forEach(function (id) {
        var el = document.getElementById(id);
        if (el) el.innerHTML = sections[id];
      });
      live.setAttribute('data-updated', String(Date.now()));
      live.setAttribute('data-updates', String(Number(live.getAttribute('data-updates') || 0) + 1));
    });
    return;
  }
  // other live pages (flow, a service): fetch the page again and swap its [data-live] parts in place
  var polled = document.querySelector('[data-poll]');
  if (!polled || !window.fetch || !window.DOMParser) return;
  var every = Number(polled.getAttribute('data-poll')) || 5000;
  setInterval(function () {
    fetch(location.href, { credentials: 'same-origin' }).then(function (r) { return r.ok ? r.text() : null; }).then(function (text) {
      if (!text) return;
      var fresh = new DOMParser().parseFromString(text, 'text/html');
      document.querySelectorAll('[data-live]').forEach(function (el) {
        var next = fresh.getElementById(el.id);
        if (next) el.innerHTML = next.innerHTML;
      });
      polled.setAttribute('data-updated', String(Date.now()));
    }).catch(function () {});
  }, every);
})();
`;
