// The page of `engine serve`. Talks only to the JSON API of the server that served it.
//
// The server describes every board the same way (rows of point names and cells, top row first)
// and every legal action by the points a click names (`to` alone, `from` and `to`, or neither),
// so clicking is the same for every game; only the drawing differs per game.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const S = 60; // distance between neighbouring points
const M = 56; // margin around the outermost points (room for the coordinates)

const $ = (id) => document.getElementById(id);

const page = {
  info: null, // GET /api/games
  session: null, // the last session view
  selected: null, // the point whose moves are shown
  hover: null, // the point under the pointer
  busy: false, // a request of the person's is under way (new game, play, undo)
  thinking: null, // the id of the session whose engine move is awaited
  hint: null, // {id, position, hint, eval}: the engine's choice in the person's place, until a move
  seed: undefined, // the engine's seed, from the URL
  mode: "play", // or "review"
  review: null, // the review shown: GET /api/reviews/{id}, its progress kept up to date
  at: 0, // the position of the review shown
};

// `data-ready="1"` on the body while the page waits for the person (or the game is over):
// what scripts driving the page wait for.
function updateReady() {
  const s = page.session;
  const waiting = page.busy || (s && page.thinking === s.id);
  document.body.dataset.ready = s && !waiting && !s.engine_to_act ? "1" : "0";
  if (s) {
    document.body.dataset.turn = s.outcome ? "over" : s.human_to_act ? "human" : "engine";
    document.body.dataset.phase = s.board.info && s.board.info.phase ? s.board.info.phase : "";
  }
}

// ---- API ----

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  if (resp.status === 204) return null;
  const data = await resp.json().catch(() => ({ error: `HTTP ${resp.status}` }));
  if (!resp.ok) {
    // The code and line are what the page translates; the reason is the server's English.
    const e = new Error(data.error || `HTTP ${resp.status}`);
    e.code = data.code;
    e.line = data.line;
    e.reason = data.line ? e.message.replace(/^line \d+: /, "") : e.message;
    throw e;
  }
  return data;
}

function showError(e, box = $("error")) {
  const text = errorText(e);
  box.textContent = text;
  if (e) setTimeout(() => { if (box.textContent === text) box.textContent = ""; }, 8000);
}

// ---- setup ----

async function init() {
  setLang(chooseLang());
  $("lang").value = LANG;
  $("lang").addEventListener("change", () => { setLang($("lang").value); relabel(); });
  page.info = await api("GET", "/api/games");
  const game = $("game");
  for (const g of page.info.games) game.add(new Option(gameTitle(g), g.name));
  const strength = $("strength");
  const params = new URLSearchParams(location.search);
  if (params.get("game")) game.value = params.get("game");
  fillSides();
  if (params.get("side")) $("side").value = params.get("side");
  if (params.get("agent")) $("agent").value = params.get("agent");
  // `strength` (visits) is what older links carry; `level` names a level.
  if (params.get("strength")) {
    const v = params.get("strength");
    if (![...strength.options].some((o) => o.value === v)) strength.add(new Option(t("visits", { n: v }), v));
    strength.value = v;
  } else if (params.get("level")) {
    strength.value = `L:${params.get("level")}`;
  }
  strength.addEventListener("change", agentShown);
  agentShown();
  // A fixed seed makes the engine's choices repeatable (the browser test uses it).
  if (params.get("seed")) page.seed = Number(params.get("seed"));
  game.addEventListener("change", () => { fillSides(); newGame(); });
  $("new-game").addEventListener("submit", (ev) => { ev.preventDefault(); newGame(); });
  $("undo").addEventListener("click", undo);
  $("resign").addEventListener("click", resign);
  $("hint").addEventListener("click", hint);
  initReview();
  await newGame();
}

function gameTitle(g) {
  return LANG === "en" ? g.title : t(`game.${g.name}`);
}

// After a switch of language: the form's options, then everything drawn.
function relabel() {
  const game = $("game");
  for (const o of game.options) {
    const g = page.info && page.info.games.find((x) => x.name === o.value);
    if (g) o.text = gameTitle(g);
  }
  fillSides();
  render();
  if (page.session && page.mode !== "review") renderSide();
  renderReview();
}

function fillSides() {
  const g = page.info.games.find((x) => x.name === $("game").value) || page.info.games[0];
  const side = $("side");
  const old = side.value;
  side.innerHTML = "";
  side.add(new Option(sideName(g, "first"), "first"));
  side.add(new Option(sideName(g, "second"), "second"));
  side.add(new Option(t("side.none"), "none"));
  side.value = old || "first";
  // The agents this game can be played by (`net` only where a model is loaded).
  const agent = $("agent");
  const chosen = agent.dataset.game === g.name && agent.value ? agent.value : g.default_agent || page.info.default_agent;
  agent.innerHTML = "";
  agent.dataset.game = g.name;
  for (const a of g.agents) agent.add(new Option(WORDS.en[`agent.${a}`] ? t(`agent.${a}`) : a, a));
  agent.value = g.agents.includes(chosen) ? chosen : g.agents[0];
  fillStrength(g);
}

// The strengths of game `g`: its named levels with their Elo, then visits per decision (for an
// engine chosen by kind). A level is the default; the choice is kept where the game offers it.
function fillStrength(g) {
  const strength = $("strength");
  const old = strength.value;
  strength.innerHTML = "";
  if (g.levels.length) {
    const group = document.createElement("optgroup");
    group.label = t("levels");
    for (const l of g.levels) {
      const elo = (l.measured ? "" : "~") + Math.round(l.elo);
      group.appendChild(new Option(t("level", { name: LANG === "zh" ? l.chinese : l.english, elo }), `L:${l.key}`));
    }
    strength.appendChild(group);
  }
  const group = document.createElement("optgroup");
  group.label = t("visits.group");
  const choices = new Set([25, 100, 400, 1600, 6400, page.info.default_visits]);
  for (const v of [...choices].sort((a, b) => a - b)) {
    if (v <= page.info.max_visits) group.appendChild(new Option(t("visits", { n: v }), String(v)));
  }
  strength.appendChild(group);
  const middle = g.levels[Math.floor((g.levels.length - 1) / 2)];
  const keep = [...strength.options].some((o) => o.value === old);
  strength.value = keep ? old : middle ? `L:${middle.key}` : String(page.info.default_visits);
  agentShown();
}

// A level names its engine: the engine's own choice applies to visits only.
function agentShown() {
  $("agent").disabled = $("strength").value.startsWith("L:");
}

// One request of the person's: the page is busy meanwhile, a refusal is shown, and the page is
// drawn again after.
async function request(fn) {
  page.busy = true;
  // Not ready until the answer is in: scripts driving the page wait on this.
  updateReady();
  try {
    await fn();
  } catch (e) {
    showError(e);
  } finally {
    page.busy = false;
    render();
    updateReady();
  }
}

async function newGame() {
  if (page.busy) return;
  leaveReview();
  const old = page.session;
  await request(async () => {
    // A game the engine is thinking in is deleted by engineTurns once the answer is in.
    if (old && page.thinking !== old.id) await api("DELETE", `/api/sessions/${old.id}`).catch(() => {});
    const chosen = $("strength").value;
    const engine = chosen.startsWith("L:") ? { level: chosen.slice(2) }
      : { agent: $("agent").value, strength: Number(chosen) };
    const s = await api("POST", "/api/sessions", {
      game: $("game").value,
      side: $("side").value,
      ...engine,
      ...(page.seed !== undefined ? { seed: page.seed } : {}),
    });
    page.selected = null;
    show(s);
  });
  await engineTurns();
}

// ---- actions ----

async function play(action) {
  if (page.busy || !page.session || page.thinking === page.session.id) return;
  page.selected = null;
  const id = page.session.id;
  await request(async () => show(await api("POST", `/api/sessions/${id}/play`, { action })));
  await engineTurns();
}

// The engine acts until it is the person's turn again (a Liuzhou turn can be several actions).
// A new game may begin while it thinks: the loop then drops the old game's answer and ends.
async function engineTurns() {
  while (page.session && page.session.engine_to_act && !page.busy && page.thinking !== page.session.id) {
    const id = page.session.id;
    page.thinking = id;
    setStatus(statusText(page.session), "thinking");
    try {
      const r = await api("POST", `/api/sessions/${id}/engine`);
      if (!page.session || page.session.id !== id) {
        // A new game began meanwhile; the old one could not be deleted while it thought.
        api("DELETE", `/api/sessions/${id}`).catch(() => {});
        return;
      }
      show(r.session);
    } catch (e) {
      if (page.session && page.session.id === id) showError(e);
      return;
    } finally {
      if (page.thinking === id) page.thinking = null;
      render();
      updateReady();
    }
  }
}

async function undo() {
  if (page.busy || !page.session) return;
  if (page.thinking === page.session.id) {
    showError(t("busy.undo"));
    return;
  }
  const id = page.session.id;
  await request(async () => {
    const r = await api("POST", `/api/sessions/${id}/undo`);
    page.selected = null;
    show(r.session);
  });
  await engineTurns();
}

async function resign() {
  const s = page.session;
  if (page.busy || !s || s.outcome || !s.human) return;
  if (page.thinking === s.id) {
    showError(t("busy.resign"));
    return;
  }
  if (!window.confirm(t("confirm.resign"))) return;
  await request(async () => show(await api("POST", `/api/sessions/${s.id}/resign`)));
}

// The engine thinks in the person's place; its choice is marked on the board until a move.
async function hint() {
  const s = page.session;
  if (page.busy || !s || s.outcome || !s.human_to_act || page.thinking === s.id) return;
  await request(async () => {
    const r = await api("POST", `/api/sessions/${s.id}/hint`);
    page.hint = { id: s.id, position: s.position, ...r };
  });
  renderSide();
}

// The hint, if it is for the position shown.
function currentHint(s) {
  const h = page.hint;
  return h && s && h.id === s.id && h.position === s.position && s.human_to_act ? h : null;
}

// ---- state → page ----

function show(s) {
  page.session = s;
  // A game goes on behind a review: it is drawn again on the way back.
  if (page.mode === "review") return updateReady();
  render();
  renderSide();
  updateReady();
}

// The clickable structure of the legal actions.
function clickMap(s) {
  const one = new Map(); // point → action
  const moves = new Map(); // from → [{to, action}]
  const none = []; // actions on no point
  if (!s.human_to_act || page.busy) return { one, moves, none };
  for (const a of s.legal) {
    if (a.from && a.to) {
      if (!moves.has(a.from)) moves.set(a.from, []);
      moves.get(a.from).push(a);
    } else if (a.to) one.set(a.to, a.action);
    else none.push(a.action);
  }
  return { one, moves, none };
}

function onPoint(name) {
  const s = page.session;
  if (!s) return;
  const { one, moves } = clickMap(s);
  if (page.selected) {
    const m = (moves.get(page.selected) || []).find((a) => a.to === name);
    if (m) return play(m.action);
  }
  if (one.has(name)) return play(one.get(name));
  page.selected = moves.has(name) && page.selected !== name ? name : null;
  render();
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// Xiangqi is drawn from the person's side, as players sit: Black at the bottom when the person
// plays Black (the board is the same turned half round; points keep their names).
function oriented(s) {
  const b = s.board;
  if (s.game !== "xiangqi" || s.human !== "second") return b;
  const turn = (rows) => rows.slice().reverse().map((r) => r.slice().reverse());
  return { ...b, names: turn(b.names), cells: turn(b.cells) };
}

function render() {
  const s = page.mode === "review" ? reviewSession() : page.session;
  const svg = $("board");
  svg.innerHTML = "";
  if (!s) return;
  const b = oriented(s);
  const W = 2 * M + (b.cols - 1) * S;
  const H = 2 * M + (b.rows - 1) * S;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.dataset.game = s.game;
  const at = new Map(); // point name → [x, y]
  b.names.forEach((row, r) => row.forEach((n, c) => at.set(n, [M + c * S, M + r * S])));
  el("rect", { class: "board-bg", x: 0, y: 0, width: W, height: H, rx: 8 }, svg);
  const drawers = { liuzhou: drawLiuzhou, xiangqi: drawXiangqi, go: drawGo };
  (drawers[s.game] || drawGrid)(svg, b);
  labels(svg, b);

  // Last move: where it came from, and a ring where it went.
  if (s.last) {
    if (s.last.from && at.has(s.last.from)) {
      const [x, y] = at.get(s.last.from);
      el("rect", { class: "last-from", x: x - 9, y: y - 9, width: 18, height: 18, rx: 3 }, svg);
    }
  }
  // Pieces.
  b.cells.forEach((row, r) => row.forEach((cell, c) => {
    if (cell) drawPiece(svg, s.game, cell, M + c * S, M + r * S, b.names[r][c]);
  }));
  if (s.last && s.last.to && at.has(s.last.to)) {
    const [x, y] = at.get(s.last.to);
    el("rect", { class: "last-move", x: x - S / 2 + 3, y: y - S / 2 + 3, width: S - 6, height: S - 6, rx: 6 }, svg);
  }

  // The hint: a dashed ring on the points it names (where from, and where to).
  const h = currentHint(s);
  for (const p of h ? [h.hint.from, h.hint.to] : []) {
    if (!p || !at.has(p)) continue;
    const [x, y] = at.get(p);
    el("rect", { class: "hint", x: x - S / 2 + 5, y: y - S / 2 + 5, width: S - 10, height: S - 10, rx: 8, "data-hint": p }, svg);
  }

  if (page.mode === "review") {
    drawReview(svg, b, at);
    return;
  }

  // Targets and moves.
  const { one, moves, none } = clickMap(s);
  const occupied = (n) => { const [x, y] = at.get(n); const c = b.cells[Math.round((y - M) / S)][Math.round((x - M) / S)]; return c !== ""; };
  for (const [n] of one) {
    if (!at.has(n)) continue;
    const [x, y] = at.get(n);
    if (occupied(n)) {
      // A stone that can be selected (marked, captured, removed): always shown.
      el("circle", { class: "target" + (page.hover === n ? " hover" : ""), cx: x, cy: y, r: S * 0.47 }, svg);
    } else if (page.hover === n) {
      drawPiece(svg, s.game, s.to_act === "first" ? "B" : "W", x, y, null).classList.add("ghost");
    }
  }
  for (const [from] of moves) {
    if (!at.has(from)) continue;
    const [x, y] = at.get(from);
    el("circle", { class: page.selected === from ? "selected" : "movable", cx: x, cy: y, r: S * 0.46 }, svg);
  }
  const shown = page.selected || (page.hover && moves.has(page.hover) ? page.hover : null);
  for (const a of moves.get(shown) || []) {
    if (!at.has(a.to)) continue;
    const [x, y] = at.get(a.to);
    if (occupied(a.to)) el("circle", { class: "dest capture", cx: x, cy: y, r: S * 0.44 }, svg);
    else el("circle", { class: "dest", cx: x, cy: y, r: 9 }, svg);
  }

  // Hit areas last, so they take the clicks; data-point lets tests click a point by name.
  for (const [n, [x, y]] of at) {
    const active = one.has(n) || moves.has(n) || (page.selected && (moves.get(page.selected) || []).some((a) => a.to === n));
    const hit = el("rect", { class: "hit" + (active ? " active" : ""), x: x - S / 2, y: y - S / 2, width: S, height: S, "data-point": n }, svg);
    hit.addEventListener("click", () => onPoint(n));
    // A mouse only: a touch's emulated hover would redraw the board under the finger and
    // swallow the tap.
    hit.addEventListener("pointerenter", (e) => { if (e.pointerType === "mouse" && page.hover !== n) { page.hover = n; render(); } });
    hit.addEventListener("pointerleave", (e) => { if (e.pointerType === "mouse" && page.hover === n) { page.hover = null; render(); } });
  }

  // Actions on no point (Go's pass).
  const extra = $("extra-actions");
  extra.innerHTML = "";
  for (const a of none) {
    const btn = document.createElement("button");
    btn.type = "button";
    btn.textContent = WORDS.en[`action.${a}`] ? t(`action.${a}`) : a;
    btn.dataset.action = a;
    btn.addEventListener("click", () => play(a));
    extra.appendChild(btn);
  }
  setStatus(statusText(s), s.outcome ? "over" : "");
}

function labels(svg, b) {
  const split = (n) => /^([A-Za-z]+)(\d+)$/.exec(n) || [n, n, ""];
  b.names[b.rows - 1].forEach((n, c) => {
    const t = el("text", { class: "label", x: M + c * S, y: M + (b.rows - 1) * S + M * 0.72 }, svg);
    t.textContent = split(n)[1];
  });
  b.names.forEach((row, r) => {
    const t = el("text", { class: "label", x: M * 0.28, y: M + r * S }, svg);
    t.textContent = split(row[0])[2];
  });
}

function line(svg, x1, y1, x2, y2, cls) {
  el("line", { class: cls || "grid", x1, y1, x2, y2 }, svg);
}

function drawGrid(svg, b) {
  const x1 = M + (b.cols - 1) * S, y1 = M + (b.rows - 1) * S;
  for (let c = 0; c < b.cols; c++) line(svg, M + c * S, M, M + c * S, y1);
  for (let r = 0; r < b.rows; r++) line(svg, M, M + r * S, x1, M + r * S);
  el("rect", { class: "grid border", x: M, y: M, width: x1 - M, height: y1 - M }, svg);
}

function drawLiuzhou(svg, b) {
  drawGrid(svg, b);
}

function drawGo(svg, b) {
  drawGrid(svg, b);
  const n = b.cols;
  if (n < 7 || b.rows !== n) return;
  // Star points: the 3rd line (4th from 13×13 up), the sides' middles on big boards, the centre.
  const e = n >= 13 ? 3 : 2;
  const lines = n >= 15 && n % 2 === 1 ? [e, (n - 1) / 2, n - 1 - e] : [e, n - 1 - e];
  const stars = [];
  for (const r of lines) for (const c of lines) stars.push([r, c]);
  if (n % 2 === 1 && lines.length === 2) stars.push([(n - 1) / 2, (n - 1) / 2]);
  for (const [r, c] of stars) el("circle", { class: "star", cx: M + c * S, cy: M + r * S, r: 5 }, svg);
}

function drawXiangqi(svg, b) {
  const x1 = M + 8 * S, yTop = M, yBot = M + 9 * S, yRiverTop = M + 4 * S, yRiverBot = M + 5 * S;
  for (let r = 0; r < 10; r++) line(svg, M, M + r * S, x1, M + r * S);
  for (let c = 0; c < 9; c++) {
    const x = M + c * S;
    if (c === 0 || c === 8) line(svg, x, yTop, x, yBot);
    else { line(svg, x, yTop, x, yRiverTop); line(svg, x, yRiverBot, x, yBot); }
  }
  // Palaces: the diagonals of the 3 × 3 squares at each end.
  for (const y0 of [yTop, M + 7 * S]) {
    line(svg, M + 3 * S, y0, M + 5 * S, y0 + 2 * S);
    line(svg, M + 5 * S, y0, M + 3 * S, y0 + 2 * S);
  }
  el("rect", { class: "grid border", x: M, y: yTop, width: 8 * S, height: 9 * S }, svg);
  const river = el("text", { class: "river", x: M + 4 * S, y: (yRiverTop + yRiverBot) / 2 }, svg);
  river.textContent = "楚 河　　漢 界";
}

const XQ = { k: "將", a: "士", b: "象", e: "象", n: "馬", h: "馬", r: "車", c: "砲", p: "卒",
             K: "帥", A: "仕", B: "相", E: "相", N: "傌", H: "傌", R: "俥", C: "炮", P: "兵" };

function drawPiece(svg, game, cell, x, y, name) {
  const g = el("g", {}, svg);
  if (name) {
    g.setAttribute("data-cell", name);
    g.setAttribute("data-piece", cell);
  }
  if (game === "xiangqi") {
    const red = cell === cell.toUpperCase();
    el("circle", { class: "piece " + (red ? "piece-r" : "piece-k"), cx: x, cy: y, r: S * 0.44 }, g);
    el("circle", { class: "piece " + (red ? "piece-r" : "piece-k"), cx: x, cy: y, r: S * 0.36, "stroke-width": 1 }, g);
    const t = el("text", { class: "piece-text " + (red ? "r" : "k"), x, y }, g);
    t.textContent = XQ[cell] || cell;
    return g;
  }
  // Stones: upper case unmarked, lower case marked (Liuzhou); B/X black, W/O white.
  const black = "BbXx".includes(cell);
  const marked = cell === cell.toLowerCase() && game === "liuzhou";
  const c = el("circle", { class: "stone " + (black ? "stone-b" : "stone-w") + (marked ? " marked" : ""), cx: x, cy: y, r: S * 0.42 }, g);
  if (marked) {
    const d = S * 0.22;
    el("line", { class: "mark-x", x1: x - d, y1: y - d, x2: x + d, y2: y + d }, g);
    el("line", { class: "mark-x", x1: x - d, y1: y + d, x2: x + d, y2: y - d }, g);
    g.setAttribute("data-marked", "true");
  }
  void c;
  return g;
}

// ---- status, phase panel, evaluation, history ----

function setStatus(text, cls) {
  const st = $("status");
  st.textContent = text;
  st.className = cls || "";
}

// A side's name in the chosen language: `key` is `first` or `second`.
function sideName(s, key) {
  return side(s.sides[key === "first" ? 0 : 1]);
}

// The outcome in words: who won (or a draw) and why.
function outcomeText(s, winner, reason) {
  const text = winner ? t("outcome.win", { side: sideName(s, winner) }) : t("outcome.draw");
  const why = reason ? t("status.why", { reason: reasonText(reason) }) : "";
  return { text, why };
}

function statusText(s) {
  if (s.outcome) return t("status.over", outcomeText(s, s.outcome.winner, s.outcome.reason));
  const me = sideName(s, s.to_act);
  const opp = sideName(s, s.to_act === "first" ? "second" : "first");
  const who = t(s.human_to_act ? "who.you" : "who.engine", { side: me });
  const v = { who, opp, n: s.board.info && s.board.info.pending };
  if (s.game === "liuzhou") {
    const i = s.board.info;
    if (i.phase === "move" && i.stuck) return t("lz.stuck", v);
    if (WORDS.en[`lz.${i.phase}`]) return t(`lz.${i.phase}`, v);
  }
  const check = s.board.info && s.board.info.in_check ? t("status.check") : "";
  return t("status.move", v) + check;
}

const LZ_PHASES = ["place", "mark", "forced", "move", "capture", "counter"];

function renderSide() {
  const s = page.session;
  const panel = $("phase-panel");
  panel.innerHTML = "";
  if (s.game === "liuzhou") {
    const i = s.board.info;
    const title = document.createElement("strong");
    title.textContent = t("phases");
    panel.appendChild(title);
    const ol = document.createElement("ol");
    for (const key of LZ_PHASES) {
      const li = document.createElement("li");
      li.dataset.phase = key;
      li.textContent = t(`phase.${key}`) + (key === i.phase && i.pending ? t("pending", { n: i.pending }) : "");
      if (key === i.phase) {
        li.className = "current";
        li.id = "current-phase";
        const p = document.createElement("div");
        p.className = "rule";
        p.textContent = t(`phase.${key}.rule`);
        li.appendChild(p);
      }
      ol.appendChild(li);
    }
    panel.appendChild(ol);
    const counts = document.createElement("div");
    counts.className = "counts";
    const rows = [
      [t("count.stones"), `${side(s.sides[0])} ${i.stones[0]} · ${side(s.sides[1])} ${i.stones[1]}`],
      [t("count.placed"), `${i.placed[0]}/${i.stones_per_player} · ${i.placed[1]}/${i.stones_per_player}`],
      [t("count.marked"), String(i.marked)],
      [t("count.actions"), `${i.move_count}/${i.move_limit}`],
      [t("count.since"), `${i.moves_since_capture}/${i.no_capture_limit}`],
      [t("count.lose"), t("count.lose.n", { n: i.lose_below })],
    ];
    for (const [k, v] of rows) {
      const a = document.createElement("span"); a.textContent = k;
      const b = document.createElement("span"); b.textContent = v;
      counts.append(a, b);
    }
    panel.appendChild(counts);
  } else {
    const p = document.createElement("div");
    p.textContent = t("first.moves", { title: LANG === "en" ? s.title : t(`game.${s.game}`), side: side(s.sides[0]) });
    panel.appendChild(p);
    if (s.board.info && typeof s.board.info === "object") {
      const counts = document.createElement("div");
      counts.className = "counts";
      for (const [k, v] of Object.entries(s.board.info)) {
        if (typeof v === "boolean") continue; // flags show in the status line instead
        const a = document.createElement("span"); a.textContent = WORDS.en[`info.${k}`] ? t(`info.${k}`) : k.replace(/_/g, " ");
        const b = document.createElement("span"); b.textContent = Array.isArray(v) ? v.join(" · ") : k === "area_score" ? score(String(v)) : String(v);
        counts.append(a, b);
      }
      panel.appendChild(counts);
    }
  }

  // Evaluation bar: the first player's share, from the engine's last decision.
  if (s.eval && s.eval.value_first !== null && s.eval.value_first !== undefined) {
    evalBar(s, s.eval.value_first,
      (s.eval.visits ? t("eval.visits", { n: s.eval.visits }) : "") +
      (s.eval.nodes ? t("eval.nodes", { n: s.eval.nodes }) : "") +
      (s.eval.pv.length ? t("eval.pv", { line: s.eval.pv.join(" ") }) : ""));
  } else {
    evalBar(s, null, !s.eval ? t("eval.none")
      : ["mcts", "net"].includes(s.agent) ? t("eval.forced")
      : t("eval.agent", { agent: s.agent }));
  }

  const hist = $("history");
  hist.innerHTML = "";
  s.history.forEach((h, k) => {
    const li = document.createElement("li");
    li.textContent = `${t(`initial.${s.sides[h.player === "first" ? 0 : 1]}`)} ${h.display || h.action}`;
    li.title = h.display ? h.action : "";
    li.className = (h.engine ? "engine" : "") + (k === s.history.length - 1 ? " last" : "");
    hist.appendChild(li);
  });
  hist.scrollTop = hist.scrollHeight;
  $("undo").disabled = !s.can_undo;
  $("resign").disabled = !!s.outcome || !s.human;
  $("hint").disabled = !!s.outcome || !s.human_to_act;
  $("review-game").disabled = !s.outcome;
  // The hint in words, with the value for the person (the bar shows the first player's).
  const h = currentHint(s);
  const ht = $("hint-text");
  if (h) {
    const v = h.eval.value_first;
    const mine = v === null || v === undefined ? null : s.human === "first" ? v : -v;
    ht.textContent = t("hint.text", { action: h.hint.action }) +
      (mine === null ? "" : t("hint.you", { p: (100 * (mine + 1) / 2).toFixed(0) })) +
      (h.eval.visits ? t("eval.visits", { n: h.eval.visits }) : "") +
      (h.eval.nodes ? t("eval.nodes", { n: h.eval.nodes }) : "") +
      (h.eval.pv.length > 1 ? t("hint.line", { line: h.eval.pv.join(" ") }) : "");
  } else {
    ht.textContent = "";
  }
  $("record").href = `/api/sessions/${s.id}/record`;
  $("position").textContent = s.position;
}

// The evaluation bar: the first player's expected share `value` (−1..=1, or null for none).
function evalBar(s, value, extra) {
  const bar = $("eval-bar");
  const fill = $("eval-fill");
  const text = $("eval-text");
  bar.className = s.game === "xiangqi" ? "red" : "";
  if (value === null || value === undefined) {
    bar.className += " none";
    fill.style.width = "50%";
    text.textContent = extra;
    return;
  }
  const p = (value + 1) / 2;
  fill.style.width = `${(100 * p).toFixed(1)}%`;
  text.textContent = t("eval.share", { side: sideName(s, "first"), p: (100 * p).toFixed(0) }) + extra;
}

init().catch(showError);
