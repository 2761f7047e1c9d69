// Review on the page: a finished game or a loaded record, stepped through on the same board,
// with the engine's view of every position (from `/api/reviews`): a graph of the first player's
// expected score over the game, the engine's preferred move and line beside the one played,
// the moves that lost the most, and for Go the territory and the score lead. The analysis runs
// on the server; the page polls its progress while it runs.
"use strict";

const GRAPH_W = 600;
const GRAPH_H = 150;
const POLL_MS = 300;

function initReview() {
  $("review-game").addEventListener("click", reviewGame);
  $("load-file").addEventListener("change", readFile);
  $("load-open").addEventListener("click", openRecord);
  $("rv-first").addEventListener("click", () => goTo(0));
  $("rv-prev").addEventListener("click", () => goTo(page.at - 1));
  $("rv-next").addEventListener("click", () => goTo(page.at + 1));
  $("rv-last").addEventListener("click", () => goTo(Infinity));
  $("rv-analyse").addEventListener("click", () => analyse());
  $("rv-stop").addEventListener("click", stopAnalysis);
  $("rv-back").addEventListener("click", () => { leaveReview(); render(); if (page.session) renderSide(); });
  $("rv-territory").addEventListener("change", render);
  $("graph").addEventListener("click", (ev) => {
    const r = page.review;
    const box = $("graph").getBoundingClientRect();
    if (!r || box.width === 0) return;
    goTo(Math.round(((ev.clientX - box.left) / box.width) * (r.positions.length - 1)));
  });
  document.addEventListener("keydown", (ev) => {
    if (page.mode !== "review" || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.target.closest && ev.target.closest("input, textarea, select")) return;
    const to = { ArrowLeft: page.at - 1, ArrowRight: page.at + 1, Home: 0, End: Infinity }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    goTo(to);
  });
  const strength = $("rv-strength");
  const max = page.info.analysis_max_visits;
  const choices = new Set([16, 50, 100, 200, 400, 800, 1600, page.info.analysis_default_visits]);
  for (const v of [...choices].sort((a, b) => a - b)) {
    if (v <= max) strength.add(new Option(t("visits", { n: v }), String(v)));
  }
  strength.value = String(page.info.analysis_default_visits);
  const wanted = new URLSearchParams(location.search).get("analysis");
  if (wanted && [...strength.options].some((o) => o.value === wanted)) strength.value = wanted;
}

// ---- opening and leaving ----

async function reviewGame() {
  const s = page.session;
  if (!s || !s.outcome) return;
  await openReview({ session: s.id }, $("error"));
}

// A record file: UTF-8, else GB18030 (the encoding of many Chinese Xiangqi files).
function readFile() {
  const file = $("load-file").files[0];
  if (!file) return;
  file.arrayBuffer().then((buf) => {
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(buf);
    } catch (_) {
      text = new TextDecoder("gb18030").decode(buf);
    }
    $("load-text").value = text;
  }).catch((e) => showError(e, $("load-error")));
}

// The game a record is of: SGF is Go, a Liuzhou record says so; else the game chosen above.
function recordGame(text) {
  const s = text.trim();
  if (s.startsWith("(;")) return "go";
  if (/\[Game\s+"Liuzhou"\]/i.test(s) || /\[StartLFEN /.test(s)) return "liuzhou";
  if (/\[Game\s+"(Chinese Chess|Xiangqi)"\]/i.test(s)) return "xiangqi";
  return $("game").value;
}

async function openRecord() {
  const text = $("load-text").value;
  await openReview({ game: recordGame(text), record: text }, $("load-error"));
}

async function openReview(body, errorBox) {
  showError(null, errorBox);
  try {
    const r = await api("POST", "/api/reviews", body);
    leaveReview();
    page.review = r;
    page.mode = "review";
    page.at = 0;
    document.body.classList.add("reviewing");
    render();
    renderReview();
    await analyse();
  } catch (e) {
    showError(e, errorBox);
    document.body.dataset.loadError = e.code || "error";
  }
}

// Back to play: the review's analysis is stopped and the review dropped.
function leaveReview() {
  const r = page.review;
  page.review = null;
  page.mode = "play";
  document.body.classList.remove("reviewing");
  delete document.body.dataset.review;
  if (r) api("DELETE", `/api/reviews/${r.id}`).catch(() => {});
  renderReview();
}

// ---- analysis ----

async function analyse() {
  const r = page.review;
  if (!r) return;
  try {
    const p = await api("POST", `/api/reviews/${r.id}/analyse`, { strength: Number($("rv-strength").value) });
    Object.assign(r, p);
    renderReview();
    poll(r.id);
  } catch (e) {
    showError(e, $("rv-error"));
  }
}

async function stopAnalysis() {
  const r = page.review;
  if (!r) return;
  try {
    Object.assign(r, await api("POST", `/api/reviews/${r.id}/stop`));
  } catch (e) {
    showError(e, $("rv-error"));
  }
  renderReview();
}

// Follows the analysis of review `id` until it ends or another review is shown.
async function poll(id) {
  if (page.polling === id) return;
  page.polling = id;
  try {
    for (;;) {
      const r = page.review;
      if (!r || r.id !== id || !["queued", "running"].includes(r.status)) break;
      await new Promise((ok) => setTimeout(ok, POLL_MS));
      if (!page.review || page.review.id !== id) break;
      Object.assign(page.review, await api("GET", `/api/reviews/${id}/progress`));
      renderReview();
      render();
    }
  } catch (e) {
    showError(e, $("rv-error"));
  } finally {
    if (page.polling === id) page.polling = null;
  }
}

// ---- drawing ----

function goTo(k) {
  const r = page.review;
  if (!r) return;
  page.at = Math.max(0, Math.min(r.positions.length - 1, k));
  render();
  renderReview();
}

// The shown position as a session view, for the board's drawing.
function reviewSession() {
  const r = page.review;
  if (!r) return null;
  const pos = r.positions[page.at];
  return {
    id: r.id, game: r.game, title: r.title, sides: r.sides, human: null,
    board: { ...r.board, cells: pos.cells, info: pos.info },
    last: page.at > 0 ? r.positions[page.at - 1].played : null,
    legal: [], human_to_act: false, to_act: pos.to_act || "first", outcome: null,
  };
}

// What only a review draws on the board: Go's territory, the engine's preferred move from here
// and the move played from here.
function drawReview(svg, b, at) {
  const r = page.review;
  const point = r.points[page.at];
  const pos = r.positions[page.at];
  if (point && point.ownership && $("rv-territory").checked) {
    const g = el("g", { class: "territory" }, svg);
    point.ownership.forEach((row, i) => row.forEach((o, j) => {
      if (Math.abs(o) < 0.2) return;
      const d = S * 0.42 * Math.abs(o);
      el("rect", { class: o > 0 ? "own-b" : "own-w", x: M + j * S - d / 2, y: M + i * S - d / 2, width: d, height: d }, g);
    }));
  }
  const mark = (p, cls, attr) => {
    if (!p || !at.has(p)) return;
    const [x, y] = at.get(p);
    el("rect", { class: cls, x: x - S / 2 + 5, y: y - S / 2 + 5, width: S - 10, height: S - 10, rx: 8, [attr]: p }, svg);
  };
  if (pos.played) {
    mark(pos.played.from, "next-move", "data-next");
    mark(pos.played.to, "next-move", "data-next");
  }
  if (point && point.best && (!pos.played || point.best.action !== pos.played.action)) {
    mark(point.best.from, "best", "data-best");
    mark(point.best.to, "best", "data-best");
  }
}

function moveText(m) {
  return m ? m.display || m.action : "";
}

function percent(v) {
  return (100 * v).toFixed(0);
}

function renderReview() {
  const panel = $("review-panel");
  const r = page.review;
  panel.hidden = !r;
  $("play-side").hidden = !!r;
  if (!r) return;
  document.body.dataset.review = r.status;
  document.body.dataset.at = String(page.at);
  const n = r.positions.length - 1;
  const title = LANG === "en" ? r.title : t(`game.${r.game}`);
  const { text, why } = outcomeText(r, r.result === "draw" ? null : r.result, r.ending);
  setStatus(t("review.mode", { title }) + " · " +
    (r.result ? t("review.result", { text, why }) : t("review.noresult")), "");
  $("rv-move").textContent = page.at === 0 ? t("review.start", { n }) : t("review.at", { k: page.at, n });
  $("rv-first").disabled = $("rv-prev").disabled = page.at === 0;
  $("rv-next").disabled = $("rv-last").disabled = page.at === n;

  // The position's value, and for Go the score lead.
  const point = r.points[page.at];
  const pos = r.positions[page.at];
  const lead = point && point.score_lead !== undefined && point.score_lead !== null
    ? " · " + t("review.lead", {
      side: sideName(r, point.score_lead >= 0 ? "first" : "second"),
      n: Math.abs(point.score_lead).toFixed(1),
    }) : "";
  evalBar(r, point ? point.value_first : null,
    point ? (point.visits ? t("eval.visits", { n: point.visits }) : "") + lead : t("eval.none"));
  $("rv-territory-box").hidden = r.game !== "go";

  // The move played from here against the engine's preference.
  const info = $("rv-info");
  info.innerHTML = "";
  const line = (txt, cls) => {
    const d = document.createElement("div");
    d.textContent = txt;
    if (cls) d.className = cls;
    info.appendChild(d);
    return d;
  };
  if (pos.played) {
    const who = sideName(r, pos.to_act);
    line(`${page.at + 1}. ${who} — ${t("review.played", { move: moveText(pos.played) })}`, "played");
    if (point && point.best) {
      if (point.best.action === pos.played.action) line(t("review.same"));
      else {
        line(t("review.best", { move: moveText(point.best) }), "best-text");
        if (point.line.length > 1) line(t("review.line", { line: point.line.join(" ") }), "line");
      }
    }
    const loss = r.losses[page.at];
    if (loss !== null && loss !== undefined && loss > 0.005) {
      const d = line(t("review.loss", { side: who, p: percent(loss / 2) }), "loss");
      if (r.mistakes.includes(page.at)) {
        const badge = document.createElement("strong");
        badge.className = "mistake";
        badge.textContent = t("review.mistake");
        d.prepend(badge, " ");
      }
    }
  } else if (point && point.best) {
    line(t("review.best", { move: moveText(point.best) }), "best-text");
  }

  // Progress and the analysis's buttons.
  const running = ["queued", "running"].includes(r.status);
  const vars = { k: r.analysed, n: r.positions.length, v: r.visits, engine: r.engine, error: r.error || "" };
  $("rv-progress-text").textContent = t(`review.status.${r.status}`, vars);
  $("rv-progress-fill").style.width = `${(100 * r.analysed / r.positions.length).toFixed(1)}%`;
  $("rv-analyse").disabled = running;
  $("rv-stop").disabled = !running;
  $("rv-record").href = `/api/reviews/${r.id}/record`;

  // The biggest mistakes, each a link to the position it was played in.
  const list = $("rv-mistakes");
  list.innerHTML = "";
  for (const i of r.mistakes.slice(0, 6)) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = "#";
    a.textContent = `${i + 1}. ${sideName(r, r.positions[i].to_act)} ${moveText(r.positions[i].played)} (−${percent(r.losses[i] / 2)}%)`;
    a.addEventListener("click", (ev) => { ev.preventDefault(); goTo(i); });
    li.appendChild(a);
    list.appendChild(li);
  }
  if (!r.mistakes.length) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = t("review.none");
    list.appendChild(li);
  }
  drawGraph(r);
}

// The first player's expected score over the game, 100 % at the top; the mistakes in red and
// the position shown as a vertical line.
function drawGraph(r) {
  const svg = $("graph");
  svg.innerHTML = "";
  svg.setAttribute("viewBox", `0 0 ${GRAPH_W} ${GRAPH_H}`);
  const n = r.positions.length;
  const x = (i) => (n > 1 ? (i / (n - 1)) * GRAPH_W : GRAPH_W / 2);
  const y = (v) => (1 - (v + 1) / 2) * GRAPH_H;
  el("rect", { class: "graph-bg", x: 0, y: 0, width: GRAPH_W, height: GRAPH_H }, svg);
  el("line", { class: "graph-mid", x1: 0, y1: GRAPH_H / 2, x2: GRAPH_W, y2: GRAPH_H / 2 }, svg);
  const title = el("title", {}, svg);
  title.textContent = t("review.graph", { side: sideName(r, "first") });
  // Runs of analysed positions, each one path.
  let run = [];
  let drawn = 0;
  const flush = () => {
    if (run.length > 1) {
      const d = run.map(([i, v], k) => `${k ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
      el("path", { class: "graph-line", d }, svg);
    }
    run = [];
  };
  r.points.forEach((p, i) => {
    if (p) { run.push([i, p.value_first]); drawn++; } else flush();
  });
  flush();
  for (const i of r.mistakes) {
    const p = r.points[i + 1];
    if (p) el("circle", { class: "graph-mistake", cx: x(i + 1), cy: y(p.value_first), r: 5, "data-move": i }, svg);
  }
  el("line", { class: "graph-at", x1: x(page.at), y1: 0, x2: x(page.at), y2: GRAPH_H }, svg);
  svg.dataset.points = String(drawn);
}
