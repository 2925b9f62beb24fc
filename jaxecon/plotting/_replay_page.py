"""The replay page's HTML, CSS and script (``jaxecon.plotting.replay`` fills in ``__TITLE__`` and ``__DATA__``).

Vanilla JavaScript, no library, no network. ``#selftest=S1,S2,...`` in the
URL makes the page move its scrubber to each step in turn and write what it
then displays (the step, every agent's coin, agent 0's last action) and any
script error into ``<pre id="selftest">`` as JSON (and ``ready_ms``, the
milliseconds from navigation to the first drawing); ``#playtest`` presses
play at 50 steps/s and 600 ms later pause, and writes the step it reached, for a headless browser's
``--dump-dom`` (``tests/test_replay.py``).
"""

PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<script>
window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push(String(e.message || e)); });
(function () { var ce = console.error; console.error = function () {
  window.__errors.push(Array.prototype.join.call(arguments, " ")); ce.apply(console, arguments); }; })();
</script>
<style>
body{font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:8px 12px;color:#222;background:#fafafa}
h1{font-size:17px;margin:2px 0 6px}h2{font-size:14px;margin:10px 0 4px;border-bottom:1px solid #ddd}
#controls{display:flex;gap:8px;align-items:center;flex-wrap:wrap;position:sticky;top:0;background:#fafafa;padding:4px 0;z-index:2}
#scrub{flex:1;min-width:240px}button{font:inherit;padding:2px 10px}#stepbox{min-width:110px}
#main{display:flex;gap:14px;align-items:flex-start;flex-wrap:wrap}#left{flex:0 0 auto}#right{flex:1;min-width:380px}
table{border-collapse:collapse}td,th{padding:2px 6px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
th{background:#f0f0f0;font-weight:600}th.x{white-space:normal;max-width:92px;vertical-align:bottom}td.l,th.l{text-align:left}.sw{display:inline-block;width:11px;height:11px;margin-right:4px;border:1px solid #555;vertical-align:-1px}
.legend>span{margin-right:10px;white-space:nowrap}.muted{color:#777}.grp{border:1.5px solid;border-radius:7px;padding:0 5px;font-size:11px;font-weight:600;background:#fff}#agents th{white-space:normal;vertical-align:bottom}#agents td,#agents th{padding:2px 4px}.act{white-space:normal;min-width:90px;max-width:150px;text-align:left}
#charts{display:flex;flex-wrap:wrap;gap:10px;margin-top:8px}.chart{background:#fff;border:1px solid #ddd}
.scroll{max-height:260px;overflow:auto}.brackets{margin:3px 0;line-height:1.9}.br{display:inline-block;border:1px solid #ddd;background:#fff;padding:0 5px;margin-right:3px;white-space:nowrap}#sidecharts{display:flex;flex-wrap:wrap;gap:8px}
body.nomap #left{flex:1 1 100%}body.nomap #right{flex:1 1 100%}canvas#map{border:1px solid #888;image-rendering:pixelated}
</style></head>
<body>
<h1>__TITLE__</h1>
<div id="controls">
<button id="play" title="play / pause (space)">&#9654; play</button>
<button id="prev" title="previous step (left)">&#9664;</button><button id="next" title="next step (right)">&#9654;</button>
<input type="range" id="scrub" min="0" max="0" value="0" aria-label="timestep">
<span id="stepbox">step <b id="step">0</b> / <span id="tmax">0</span></span>
<label>speed <select id="speed"><option>1</option><option>2</option><option selected>5</option><option>10</option>
<option>20</option><option>50</option></select> steps/s</label>
<span id="info" class="muted"></span>
</div>
<div id="main">
<div id="left"><canvas id="map" width="10" height="10"></canvas><div id="legend" class="legend"></div>
<h2 id="sidetitle" hidden>Each agent's numbers over time (click to move there)</h2><div id="sidecharts"></div></div>
<div id="right">
<h2>Agents at this step</h2><div class="scroll" id="agentsbox"><table id="agents"></table></div>
<div id="planner"></div>
<div id="marketbox"><h2>Market</h2><div id="market"></div></div>
<div id="taxbox"><h2>Taxes</h2><div id="tax"></div></div>
<div id="eventbox"><h2>Builds and gathers this step</h2><div id="events"></div></div>
</div></div>
<h2 id="chartstitle">Metrics over time (click to move there)</h2>
<div id="charts"></div>
<pre id="selftest" hidden></pre>
<script>
"use strict";
const D = __DATA__;
const T = D.T, N = D.n, H = D.H, W = D.W, HASMAP = D.snaps.length > 0 && H > 0 && W > 0;
const $ = (id) => document.getElementById(id);
let cur = 0, playing = false, lastTick = 0, acc = 0;

function fmt(x, d) {
  if (x === null || x === undefined || Number.isNaN(x)) return "\u2013";
  if (Number.isInteger(x)) return String(x);
  const p = d === undefined ? 2 : d;
  return Number(x.toFixed(p)).toString();
}
function short(x) {  // an axis label: 4.1M, 23k, 0.25
  const a = Math.abs(x);
  if (a >= 1e9) return Number((x / 1e9).toPrecision(3)) + "B";
  if (a >= 1e6) return Number((x / 1e6).toPrecision(3)) + "M";
  if (a >= 1e4) return Number((x / 1e3).toPrecision(3)) + "k";
  return fmt(x, 2);
}
function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c])); }
function at(arr, t, j) { return arr ? arr[t * N + j] : null; }
function agentLabel(j) {
  const a = D.agents[j];
  const g = a.group === null || a.group === undefined ? null : D.groups[a.group];
  return '<span class="sw" style="background:' + a.color + '"></span>' + esc(a.name) +
    (g ? ' <span class="grp" style="color:' + g.color + ";border-color:" + g.color + '">' + esc(g.name) + "</span>" : "");
}
function hex2rgb(h) { return [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)]; }
function blend(c, col, a) { return [c[0] * (1 - a) + col[0] * a, c[1] * (1 - a) + col[1] * a, c[2] * (1 - a) + col[2] * a]; }
function rgb(c) { return "rgb(" + Math.round(c[0]) + "," + Math.round(c[1]) + "," + Math.round(c[2]) + ")"; }
const C = {}; for (const k in D.colors) C[k] = hex2rgb(D.colors[k]);
const PAL = D.agents.map((a) => hex2rgb(a.color));
const clip01 = (x) => Math.max(0, Math.min(1, x || 0));

// ---------------------------------------------------------------- world map
const SCALE = HASMAP ? Math.max(4, Math.min(28, Math.floor(Math.min(620, Math.max(300, 0.44 * (window.innerWidth || 1300))) / Math.max(H, W)))) : 0;
function mapsAt(t) {
  let s = 0;
  for (let i = 0; i < D.snap_t.length; i++) if (D.snap_t[i] <= t) s = i;
  const base = D.snaps[s], t0 = D.snap_t[s], m = {};
  for (const k in base) m[k] = base[k];
  if (t > t0) {  // houses built and resources gathered since the snapshot
    const copied = {};
    const edit = (k) => { if (!copied[k] && m[k]) { m[k] = m[k].slice(); copied[k] = true; } return m[k]; };
    for (const e of D.events) {
      if (e[0] <= t0 || e[0] > t) continue;
      const idx = e[3][0] * W + e[3][1];
      if (e[2] === "B") {
        const h = edit("House"), o = edit("House@owner");
        if (h) h[idx] = 1; if (o) o[idx] = e[1];
      } else if (e[2] === "G") {
        const r = edit(e[4]);
        if (r) r[idx] = Math.max(0, r[idx] - (e[5] || 1));
      }
    }
  }
  return m;
}
function drawMap(t) {
  const cv = $("map"), s = SCALE, ctx = cv.getContext("2d");
  if (cv.width !== W * s) { cv.width = W * s; cv.height = H * s; }
  const m = mapsAt(t), owner = m["House@owner"];
  for (let r = 0; r < H; r++) for (let c = 0; c < W; c++) {
    const i = r * W + c;
    let col = C.background.slice();
    if (m.StoneSourceBlock && m.StoneSourceBlock[i] > 0) col = blend(col, C.Stone, D.tint);
    if (m.WoodSourceBlock && m.WoodSourceBlock[i] > 0) col = blend(col, C.Wood, D.tint);
    if (m.Stone) col = blend(col, C.Stone, clip01(m.Stone[i]));
    const wa = m.Wood ? clip01(m.Wood[i]) : 0;
    if (wa) col = blend(col, C.Wood, wa);
    if (m.Water) col = blend(col, C.Water, clip01(m.Water[i]));
    const ha = m.House ? clip01(m.House[i]) : 0;
    if (ha) col = blend(col, owner && owner[i] >= 0 && owner[i] < N ? PAL[owner[i]] : C.House, ha);
    ctx.fillStyle = rgb(col); ctx.fillRect(c * s, r * s, s, s);
    if (wa && s >= 4) {  // brown trunk at the bottom centre
      const hw = Math.max(Math.floor(s / 8), 1);
      ctx.fillStyle = rgb(blend(col, C.WoodTrunk, wa));
      ctx.fillRect(c * s + Math.floor(s / 2) - hw, r * s + Math.floor(5 * s / 8), 2 * hw, s - Math.floor(s / 8) - Math.floor(5 * s / 8));
    }
    if (ha && s >= 4) {  // house outline
      const e = Math.max(Math.floor(s / 16), 1);
      ctx.strokeStyle = rgb(blend(col, C.HouseOutline, ha)); ctx.lineWidth = e;
      ctx.strokeRect(c * s + e / 2, r * s + e / 2, s - e, s - e);
    }
  }
  const inset = Math.floor(s / 8), b = Math.max(Math.floor(s / 16), 1);
  ctx.font = "bold " + Math.max(8, Math.floor(s * 0.5)) + "px sans-serif";
  ctx.textAlign = "center"; ctx.textBaseline = "middle";
  for (let j = 0; j < N; j++) {
    const r = D.loc[(t * N + j) * 2], c = D.loc[(t * N + j) * 2 + 1];
    if (r < 0 || c < 0 || r >= H || c >= W) continue;
    const x = c * s + inset, y = r * s + inset, w = s - 2 * inset;
    ctx.fillStyle = rgb(C.AgentBorder); ctx.fillRect(x, y, w, w);
    ctx.fillStyle = rgb(PAL[j]); ctx.fillRect(x + b, y + b, w - 2 * b, w - 2 * b);
    if (s >= 12) {
      const p = PAL[j], lum = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
      ctx.fillStyle = lum > 140 ? "#000" : "#fff"; ctx.fillText(String(j), c * s + s / 2, r * s + s / 2 + 1);
    }
  }
}
function legend() {
  if (!HASMAP) return;
  const items = [["Wood", C.Wood], ["Stone", C.Stone], ["Water", C.Water], ["house without owner", C.House],
    ["Wood source", blend(C.background, C.Wood, D.tint)], ["Stone source", blend(C.background, C.Stone, D.tint)]];
  let h = items.map((x) => '<span><span class="sw" style="background:' + rgb(x[1]) + '"></span>' + x[0] + "</span>").join("");
  h += "<br>" + D.agents.map((a, j) => '<span><span class="sw" style="background:' + a.color + '"></span>' + esc(a.name) +
    " &amp; its houses</span>").join("");
  const snap = D.snap_t.length ? "world snapshots at steps " + (D.snap_t.length > 8 ? D.snap_t.slice(0, 4).join(", ") + ", \u2026, " + D.snap_t[D.snap_t.length - 1] : D.snap_t.join(", ")) + "; builds and gathers applied in between" : "";
  if (D.groups.length) h += "<br>groups: " + D.groups.map((g, k) => '<span class="grp" style="color:' + g.color + ";border-color:" + g.color + '">' +
    esc(g.name) + "</span> agents " + D.agents.map((a, j) => a.group === k ? j : null).filter((j) => j !== null).join(", ")).join("; ");
  $("legend").innerHTML = h + '<div class="muted">' + snap + "</div>";
  $("legend").style.maxWidth = Math.max(W * SCALE, 360) + "px";
}

// ---------------------------------------------------------------- panels
function agentsTable(t) {
  const cols = [];
  const invOther = D.inv_names.filter((k) => k !== "Coin");
  let head = '<tr><th class="l">agent</th>';
  if (D.inv.Coin) head += "<th>Coin</th>";
  for (const k of invOther) head += "<th>" + esc(k) + "</th>";
  for (const k of D.endo_names) head += "<th>" + esc(k) + "</th>";
  for (const k of D.extra_names) head += '<th class="x">' + esc(k.replace(/_/g, " ")) + "</th>";
  for (const k in D.skills) head += '<th class="x" title="at reset, fixed for the episode">' + esc(k.replace(/_/g, " ")) + "</th>";
  if (t > 0) head += "<th>reward</th>";
  head += '<th class="l">last action' + (t > 0 ? " (step " + t + ")" : "") + "</th></tr>";
  let rows = "";
  for (let j = 0; j < N; j++) {
    let r = '<tr><td class="l">' + agentLabel(j) + "</td>";
    const withEsc = (k) => {
      const v = at(D.inv[k], t, j), e = D.esc[k] ? at(D.esc[k], t, j) : 0;
      return fmt(v) + (e ? ' <span class="muted" title="in escrow (open orders)">+' + fmt(e) + "</span>" : "");
    };
    if (D.inv.Coin) r += '<td class="coin" data-v="' + at(D.inv.Coin, t, j) + '">' + withEsc("Coin") + "</td>";
    for (const k of invOther) r += "<td>" + withEsc(k) + "</td>";
    for (const k of D.endo_names) r += "<td>" + fmt(at(D.endo[k], t, j)) + "</td>";
    for (const k of D.extra_names) r += "<td>" + fmt(at(D.extra[k], t, j), 3) + "</td>";
    for (const k in D.skills) r += "<td>" + fmt(D.skills[k][j], 3) + "</td>";
    if (t > 0) r += "<td>" + fmt(D.rew[(t - 1) * (N + 1) + j], 3) + "</td>";
    r += '<td class="act">' + (t > 0 ? esc(D.actions[D.act[(t - 1) * (N + 1) + j]]) : "\u2013") + "</td></tr>";
    rows += r;
  }
  $("agents").innerHTML = head + rows;
  const pk = Object.keys(D.planner).filter((k) => D.planner[k].some((v) => v));
  let p = "";
  if (pk.length || t > 0) {
    p = '<div><b>planner</b>: ' + (pk.length ? pk.map((k) => esc(k) + " " + fmt(D.planner[k][t])).join(", ") : '<span class="muted">holds nothing</span>');
    if (t > 0) p += "; reward " + fmt(D.rew[(t - 1) * (N + 1) + N], 3) + "; last action: " + esc(D.actions[D.act[(t - 1) * (N + 1) + N]]);
    p += "</div>";
  }
  $("planner").innerHTML = p;
}
function market(t) {
  if (!D.trades.length && !D.actions.some((a) => / for /.test(a))) { $("marketbox").style.display = "none"; return; }
  let orders = [];
  if (t > 0) for (let j = 0; j < N; j++) {
    const a = D.actions[D.act[(t - 1) * (N + 1) + j]];
    for (const part of a.split("; ")) if (/^(bid|ask) /.test(part)) orders.push(agentLabel(j) + " " + esc(part));
  }
  const now = D.trades.filter((x) => x[0] === t), done = D.trades.filter((x) => x[0] <= t);
  let h = "<div><b>orders placed at step " + t + "</b>: " + (orders.length ? orders.join("; ") : '<span class="muted">none</span>') + "</div>";
  h += "<div><b>trades executed at step " + t + "</b>: ";
  if (!now.length) h += '<span class="muted">none</span></div>';
  else h += "</div><table><tr><th class='l'>commodity</th><th class='l'>buyer</th><th class='l'>seller</th><th>price</th><th>bid</th><th>ask</th></tr>" +
    now.map((x) => "<tr><td class='l'>" + esc(D.commodities[x[1]]) + "</td><td class='l'>" + agentLabel(x[2]) + "</td><td class='l'>" +
      agentLabel(x[3]) + "</td><td>" + fmt(x[4]) + "</td><td>" + fmt(x[5]) + "</td><td>" + fmt(x[6]) + "</td></tr>").join("") + "</table>";
  const last = {};
  for (const x of done) last[D.commodities[x[1]]] = [x[4], (last[D.commodities[x[1]]] || [0, 0])[1] + 1];
  const summ = Object.keys(last).map((c) => esc(c) + ": " + last[c][1] + " trades, last price " + fmt(last[c][0]));
  h += '<div class="muted">up to this step: ' + (summ.length ? summ.join("; ") : "no trade") + " (" + D.trades.length + " in the episode)</div>";
  $("market").innerHTML = h;
}
function taxes(t) {
  if (!D.taxes.length) {
    $("taxbox").style.display = D.actions.some((a) => /^set tax rates/.test(a)) ? "" : "none";
    $("tax").innerHTML = '<span class="muted">no tax period ended in this episode</span>'; return;
  }
  let k = -1;
  for (let i = 0; i < D.taxes.length; i++) if (D.taxes[i].t <= t) k = i;
  if (k < 0) { $("tax").innerHTML = '<span class="muted">no tax period has ended yet; the first ends at step ' + D.taxes[0].t + "</span>"; return; }
  const d = D.taxes[k];
  let h = "<div><b>tax period " + (k + 1) + " of " + D.taxes.length + "</b>, collected at step " + d.t +
    (d.t === t ? " (this step)" : "") + "</div><div class='brackets'><span class='muted'>marginal rate per bracket (coin):</span> ";
  for (let b = 0; b < d.cutoffs.length; b++) h += "<span class='br'>" + fmt(d.cutoffs[b], 1) + (b + 1 < d.cutoffs.length ? "\u2013" +
    fmt(d.cutoffs[b + 1], 1) : "+") + ": <b>" + fmt(100 * d.schedule[b], 1) + "%</b></span> ";
  h += "</div>";
  h += "<table><tr><th class='l'>agent</th><th>income</th><th>tax paid</th><th>received (lump sum)</th><th>net</th><th>effective rate</th></tr>";
  for (let j = 0; j < N; j++) {
    const a = d.agents[j];
    const net = a[4] !== null && a[1] !== null ? a[4] - a[1] : null;
    h += "<tr><td class='l'>" + agentLabel(j) + "</td><td>" + fmt(a[0]) + "</td><td>" + fmt(a[1]) + "</td><td>" + fmt(a[4]) +
      "</td><td>" + fmt(net) + "</td><td>" + (a[3] === null ? "\u2013" : fmt(100 * a[3], 1) + "%") + "</td></tr>";
  }
  $("tax").innerHTML = h + "</table>";
}
function events(t) {
  if (!D.events.length) { $("eventbox").style.display = "none"; return; }
  const now = D.events.filter((e) => e[0] === t);
  $("events").innerHTML = now.length ? now.map((e) => agentLabel(e[1]) + (e[2] === "B" ?
    " built a house at (" + e[3] + "), income " + fmt(e[4]) : " gathered " + fmt(e[5]) + " " + esc(e[4]) + " at (" + e[3] + ")")).join("<br>")
    : '<span class="muted">none</span>';
}

// ---------------------------------------------------------------- charts
const charts = [];
function chart(parent, title, series, w, h) {
  const cv = document.createElement("canvas"); cv.className = "chart";
  const dpr = window.devicePixelRatio || 1;
  cv.width = w * dpr; cv.height = h * dpr; cv.style.width = w + "px"; cv.style.height = h + "px";
  parent.appendChild(cv);
  let lo = Infinity, hi = -Infinity;
  for (const s of series) for (const v of s.values) if (v !== null && !Number.isNaN(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (lo === Infinity) { lo = 0; hi = 1; }
  if (hi - lo < 1e-9) { if (lo === 0) hi = 1; else { const v = lo, d = Math.max(Math.abs(v) * 0.1, 0.5); lo = v - d; hi = v + d; } }
  const L = 46, R = 18, TOP = 20, B = 18;
  const X = (t) => L + (w - L - R) * (T > 0 ? t / T : 0), Y = (v) => TOP + (h - TOP - B) * (1 - (v - lo) / (hi - lo));
  const base = document.createElement("canvas"); base.width = cv.width; base.height = cv.height;
  const g = base.getContext("2d"); g.scale(dpr, dpr);
  g.fillStyle = "#fff"; g.fillRect(0, 0, w, h);
  g.fillStyle = "#222"; g.font = "bold 12px sans-serif"; g.textBaseline = "top"; g.fillText(title, L, 3);
  g.font = "10px sans-serif"; g.fillStyle = "#555"; g.textBaseline = "middle"; g.textAlign = "right";
  g.fillText(short(hi), L - 4, Y(hi)); g.fillText(short(lo), L - 4, Y(lo));
  g.textAlign = "center"; g.textBaseline = "top"; g.fillText("0", X(0), h - B + 3); g.fillText(String(T), X(T), h - B + 3);
  g.strokeStyle = "#bbb"; g.lineWidth = 1; g.strokeRect(L, TOP, w - L - R, h - TOP - B);
  for (const s of series) {
    g.strokeStyle = s.color; g.lineWidth = 1.5; g.beginPath();
    let pen = false;
    for (let t = 0; t < s.values.length; t++) {
      const v = s.values[t];
      if (v === null || Number.isNaN(v)) { pen = false; continue; }
      if (pen) g.lineTo(X(t), Y(v)); else { g.moveTo(X(t), Y(v)); pen = true; }
    }
    g.stroke();
  }
  const c = {cv, base, X, dpr, w, h, TOP, B};
  cv.addEventListener("click", (ev) => {
    const r = cv.getBoundingClientRect(), x = ev.clientX - r.left;
    setStep(Math.round(Math.max(0, Math.min(1, (x - L) / (w - L - R))) * T));
  });
  charts.push(c);
}
function perAgent(flat) {
  return D.agents.map((a, j) => ({color: a.color, values: Array.from({length: T + 1}, (_, t) => flat[t * N + j])}));
}
function buildCharts() {
  const box = $("charts");
  if (D.metrics.coin) {
    chart(box, "coin per agent (inventory + escrow)", perAgent(D.metrics.coin), 380, 170);
    chart(box, "productivity (total coin)", [{color: "#333", values: D.metrics.productivity}], 300, 170);
    chart(box, "equality (1 - Gini of coin)", [{color: "#333", values: D.metrics.equality}], 300, 170);
  }
  for (const k of D.endo_names) chart(box, k + " per agent", perAgent(D.endo[k]), 300, 170);
  for (const k of D.inv_names) if (k !== "Coin") chart(box, k + " per agent (inventory)", perAgent(D.inv[k]), 300, 170);
  if (!HASMAP) {  // e.g. COVID-19: the states' numbers take the map's place
    const side = $("sidecharts");
    for (const k of D.extra_names) chart(side, k, perAgent(D.extra[k]), 430, 150);
    for (const k in D.planner) chart(side, "planner: " + k, [{color: "#333", values: D.planner[k]}], 430, 150);
  }
}
function drawCursors(t) {
  for (const c of charts) {
    const g = c.cv.getContext("2d");
    g.setTransform(1, 0, 0, 1, 0, 0); g.drawImage(c.base, 0, 0); g.scale(c.dpr, c.dpr);
    g.fillStyle = "rgba(0,0,0,0.12)"; g.fillRect(c.X(t) - 4, c.TOP, 8, c.h - c.TOP - c.B);
    g.strokeStyle = "#000"; g.lineWidth = 1.5; g.beginPath(); g.moveTo(c.X(t), c.TOP); g.lineTo(c.X(t), c.h - c.B); g.stroke();
  }
}

// ---------------------------------------------------------------- controls
function setStep(t) {
  cur = Math.max(0, Math.min(T, t | 0));
  $("scrub").value = String(cur);
  $("step").textContent = String(cur);
  if (HASMAP) drawMap(cur);
  agentsTable(cur); market(cur); taxes(cur); events(cur); drawCursors(cur);
}
function setPlaying(p) {
  playing = p && T > 0;
  $("play").innerHTML = playing ? "&#10074;&#10074; pause" : "&#9654; play";
  if (playing) { if (cur >= T) setStep(0); lastTick = performance.now(); acc = 0; setTimeout(tick, 16); }
}
function tick() {  // a timer, not requestAnimationFrame: it also runs where no frame is drawn (headless)
  if (!playing) return;
  const now = performance.now();
  acc += (now - lastTick) / 1000 * Number($("speed").value); lastTick = now;
  if (acc >= 1) { const k = Math.floor(acc); acc -= k; setStep(cur + k); if (cur >= T) { setPlaying(false); return; } }
  setTimeout(tick, Math.max(16, Math.min(200, 1000 / Number($("speed").value))));
}
function init() {
  $("scrub").max = String(T); $("tmax").textContent = String(T);
  $("info").textContent = N + " agents" + (HASMAP ? ", " + H + "\u00d7" + W + " world" : ", no world map in this log");
  if (!HASMAP) { $("map").style.display = "none"; document.body.classList.add("nomap"); $("sidetitle").hidden = false; }
  legend(); buildCharts();
  if (!$("charts").children.length) $("chartstitle").hidden = true;
  $("scrub").addEventListener("input", () => { setStep(Number($("scrub").value)); });
  $("play").addEventListener("click", () => setPlaying(!playing));
  $("prev").addEventListener("click", () => { setPlaying(false); setStep(cur - 1); });
  $("next").addEventListener("click", () => { setPlaying(false); setStep(cur + 1); });
  document.addEventListener("keydown", (e) => {
    if (e.target && e.target.tagName === "SELECT") return;
    if (e.key === " ") { e.preventDefault(); setPlaying(!playing); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); setPlaying(false); setStep(cur - 1); }
    else if (e.key === "ArrowRight") { e.preventDefault(); setPlaying(false); setStep(cur + 1); }
    else if (e.key === "Home") setStep(0); else if (e.key === "End") setStep(T);
  });
  setStep(0);
}
function selftest(steps) {
  const out = [];
  for (const s of steps) {
    const sc = $("scrub"); sc.value = String(s); sc.dispatchEvent(new Event("input"));
    const coin = Array.from(document.querySelectorAll("#agents td.coin")).map((td) => Number(td.dataset.v));
    const act = document.querySelector("#agents td.act");
    out.push({asked: s, step: Number($("step").textContent), scrub: Number(sc.value), coin, action0: act ? act.textContent : null});
  }
  $("selftest").textContent = JSON.stringify({T, n: N, ready_ms: READY_MS, results: out, errors: window.__errors});
}
try { init(); } catch (e) { window.__errors.push("init: " + e); }
const READY_MS = performance.now();  // since navigation started: parse, data, first drawing
if (location.hash === "#playtest") {  // press play at 50 steps/s; 600 ms later, write the step reached
  $("speed").value = "50"; $("play").click();
  setTimeout(() => { const step = cur; $("play").click();
    $("selftest").textContent = JSON.stringify({T, played_to: step, playing: playing, errors: window.__errors}); }, 600);
} else if (location.hash.indexOf("#selftest") === 0) {
  const m = location.hash.match(/^#selftest=([\d,]+)/);
  try { selftest(m ? m[1].split(",").map(Number) : [0, T >> 1, T]); } catch (e) { window.__errors.push("selftest: " + e); $("selftest").textContent = JSON.stringify({errors: window.__errors}); }
}
</script>
</body></html>
"""
