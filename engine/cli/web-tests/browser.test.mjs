// Browser test of the page `engine serve` serves: headless Chromium driven by playwright-core.
//
// Starts the engine binary on a free loopback port, plays a whole Liuzhou placement phase by
// clicks (marking a stone on the way), makes a Xiangqi move and a Go move when the server offers
// those games; then, for each game, switches the language, plays at the weakest and the
// strongest level, reviews the finished game, loads a record, steps through it with the buttons
// and the arrow keys, waits for the evaluation graph, and has a malformed record refused; last,
// a game on a phone-sized screen by taps. Takes screenshots, and exits non-zero on any failure.
//
// Environment: ENGINE_BIN (default ../../../target/debug/engine), CHROMIUM (default
// /usr/bin/chromium), SCREENSHOTS (default ../../../target/screenshots), REQUIRE_GAMES (a
// comma-separated list of games that must be served; default "liuzhou,xiangqi,go"),
// UPDATE_IMAGES=1 (also write the review and phone screenshots shown in docs/web.md to
// docs/images/).

import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const ENGINE = process.env.ENGINE_BIN || resolve(root, "target/debug/engine");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = process.env.SCREENSHOTS || resolve(root, "target/screenshots");
const REQUIRED = (process.env.REQUIRE_GAMES || "liuzhou,xiangqi,go").split(",").filter(Boolean);
const STEP_TIMEOUT = 60_000;
// Visits per engine decision: enough to show the search's figures, few enough for a debug build.
const STRENGTH = Number(process.env.STRENGTH || 100);
// Visits per position when a review is analysed.
const ANALYSIS = 16;
const IMAGES = process.env.UPDATE_IMAGES === "1" ? resolve(root, "docs/images") : SHOTS;

mkdirSync(SHOTS, { recursive: true });

// ---- the server ----

function startServer() {
  return new Promise((ok, fail) => {
    const child = spawn(ENGINE, ["serve", "--addr", "127.0.0.1:0"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, RUST_LOG: process.env.RUST_LOG || "warn" },
    });
    let out = "";
    const timer = setTimeout(() => fail(new Error(`no "listening" line from ${ENGINE}: ${out}`)), 30_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok({ child, base: m[1] });
      }
    });
    child.stderr.on("data", (d) => process.stderr.write(`[engine] ${d}`));
    child.on("error", (e) => { clearTimeout(timer); fail(e); });
    child.on("exit", (code) => { clearTimeout(timer); fail(new Error(`engine exited with ${code}: ${out}`)); });
  });
}

// ---- helpers ----

const results = [];
function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    results.push([name, true]);
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    results.push([name, false]);
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}

async function ready(page) {
  await page.waitForSelector('body[data-ready="1"]', { timeout: STEP_TIMEOUT });
}

async function shot(page, name) {
  const path = resolve(SHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`     screenshot ${path}`);
  return path;
}

async function openGame(page, base, game, side, seed, agent = "mcts") {
  const who = agent ? `&agent=${agent}` : "";
  await page.goto(`${base}?game=${game}&side=${side}&seed=${seed}${who}&strength=${STRENGTH}`);
  await page.waitForSelector(`svg#board[data-game="${game}"]`, { timeout: STEP_TIMEOUT });
  await ready(page);
}

// The board as the page draws it: point → piece ("" when empty), and the clickable points.
async function boardState(page) {
  return page.evaluate(() => {
    const cells = {};
    for (const r of document.querySelectorAll("svg#board rect.hit")) cells[r.dataset.point] = "";
    for (const g of document.querySelectorAll("svg#board g[data-cell]")) cells[g.dataset.cell] = g.dataset.piece;
    const active = [...document.querySelectorAll("svg#board rect.hit.active")].map((r) => r.dataset.point);
    return {
      cells,
      active,
      phase: document.body.dataset.phase,
      turn: document.body.dataset.turn,
      status: document.getElementById("status").textContent,
      current: (document.getElementById("current-phase") || {}).textContent || "",
    };
  });
}

const FILES = "abcdef";
const pt = (f, r) => `${FILES[f]}${r + 1}`;

// A placement for Black that completes (or else builds towards) a 2 × 2 square of black stones.
function choosePlacement(st) {
  const empty = st.active.filter((p) => st.cells[p] === "");
  const black = (p) => st.cells[p] === "B";
  let best = null;
  let bestScore = -1;
  for (const p of empty) {
    const f = FILES.indexOf(p[0]);
    const r = Number(p.slice(1)) - 1;
    let score = 0;
    for (const [df, dr] of [[0, 0], [-1, 0], [0, -1], [-1, -1]]) {
      const f0 = f + df, r0 = r + dr;
      if (f0 < 0 || r0 < 0 || f0 > 4 || r0 > 4) continue;
      const sq = [pt(f0, r0), pt(f0 + 1, r0), pt(f0, r0 + 1), pt(f0 + 1, r0 + 1)];
      if (sq.some((q) => q !== p && st.cells[q] !== "" && !black(q))) continue; // blocked
      const mine = sq.filter((q) => q !== p && black(q)).length;
      score = Math.max(score, mine === 3 ? 100 : mine * 10 + 1);
    }
    if (score > bestScore) { bestScore = score; best = p; }
  }
  return best || empty[0];
}

// ---- the tests ----

async function liuzhou(page, base) {
  await openGame(page, base, "liuzhou", "first", 7);
  let st = await boardState(page);
  check(st.phase === "place" && st.turn === "human", `starts in placement with Black to act (${st.phase}, ${st.turn})`);
  check(st.current.includes("Placement"), "the phase panel shows Placement");
  check(Object.keys(st.cells).length === 36, "36 points");
  await shot(page, "liuzhou-start");

  // Hovering an empty point shows a ghost stone there.
  await page.hover('svg#board rect.hit[data-point="c3"]');
  check(await page.locator("svg#board g.ghost").count() === 1, "hover shows a ghost stone");

  // A hint: the engine's choice for Black, ringed on the board and said in words; nothing played.
  await page.click("#hint");
  await ready(page);
  const hinted = await page.evaluate(() => [...document.querySelectorAll("svg#board rect.hint")].map((r) => r.dataset.hint));
  const hintText = await page.locator("#hint-text").textContent();
  check(hinted.length === 1 && st.active.includes(hinted[0]), `the hint rings one legal point (${hinted})`);
  check(hintText.startsWith(`Hint: ${hinted[0]}`) && /visits/.test(hintText), `the hint is said in words: ${hintText}`);
  check(await page.locator("#history li").count() === 0, "a hint plays nothing");
  await shot(page, "liuzhou-hint");

  let marks = 0;
  let placements = 0;
  let markShot = false;
  for (let guard = 0; guard < 100; guard++) {
    await ready(page);
    st = await boardState(page);
    if (st.turn === "over" || !["place", "mark"].includes(st.phase)) break;
    check(st.turn === "human", `Black to act in ${st.phase}`);
    if (st.phase === "mark") {
      check(/mark \d+ of White/.test(st.status), `status names the owed marks: ${st.status}`);
      check(st.current.includes("Mark selection") && st.current.includes("pending"), "panel shows Mark selection with marks pending");
      const targets = st.active.filter((p) => st.cells[p] === "W");
      check(targets.length > 0 && targets.length === st.active.length, "mark targets are White's unmarked stones");
      check(await page.locator("svg#board circle.target").count() === targets.length, "targets highlighted");
      await page.hover(`svg#board rect.hit[data-point="${targets[0]}"]`);
      if (!markShot) { await shot(page, "liuzhou-mark-selection"); markShot = true; }
      const before = await page.locator('svg#board g[data-marked="true"]').count();
      await page.click(`svg#board rect.hit[data-point="${targets[0]}"]`);
      await page.waitForFunction((n) => document.querySelectorAll('svg#board g[data-marked="true"]').length > n, before, { timeout: STEP_TIMEOUT });
      marks++;
    } else {
      const p = choosePlacement(st);
      const n = st.active.length;
      await page.click(`svg#board rect.hit[data-point="${p}"]`);
      await page.waitForFunction(
        (q) => { const g = document.querySelector(`svg#board g[data-cell="${q}"]`); return g && g.dataset.piece === "B"; },
        p, { timeout: STEP_TIMEOUT });
      placements++;
      check(n > 0, "placements offered");
    }
  }
  await ready(page);
  st = await boardState(page);
  console.log(`     Black placed ${placements} stones and marked ${marks}; now ${st.phase}: ${st.status}`);
  check(placements === 18, `Black placed all 18 stones by clicks (${placements})`);
  check(marks >= 1, "at least one mark selected by clicks");
  check(!["place", "mark"].includes(st.phase), `placement is over (${st.phase})`);
  const history = await page.locator("#history li").count();
  check(history >= 36 + marks, `history lists every action (${history})`);
  check(await page.locator('svg#board g[data-marked="true"]').count() === 0, "marked stones were removed when the board filled");
  await shot(page, "liuzhou-after-placement");

  // One more action by clicks in the phase that follows: a step (from, then to) or a removal.
  if (st.turn === "human") {
    const from = st.active.find((p) => st.cells[p] === "B");
    if (st.phase === "move" && from) {
      await page.click(`svg#board rect.hit[data-point="${from}"]`);
      check(await page.locator("svg#board circle.selected").count() === 1, "a selected stone is ringed");
      check(await page.locator("svg#board circle.dest").count() >= 1, "its destinations are shown");
      await shot(page, "liuzhou-step-selected");
      const dest = await page.evaluate(() => [...document.querySelectorAll("svg#board rect.hit.active")].map((r) => r.dataset.point));
      const to = dest.find((p) => st.cells[p] === "");
      await page.click(`svg#board rect.hit[data-point="${to}"]`);
      await page.waitForFunction((q) => { const g = document.querySelector(`svg#board g[data-cell="${q}"]`); return g && g.dataset.piece === "B"; }, to, { timeout: STEP_TIMEOUT });
    } else {
      await page.click(`svg#board rect.hit[data-point="${st.active[0]}"]`);
    }
    await ready(page);
  }

  // Undo takes back the person's last action (and the replies).
  const before = await page.locator("#history li").count();
  check(await page.locator("#undo").isEnabled(), "undo is enabled");
  await page.click("#undo");
  await page.waitForFunction((n) => document.querySelectorAll("#history li").length < n, before, { timeout: STEP_TIMEOUT });
  await ready(page);

  // Play on to the end by clicks: a legal action each turn, clicked as a person would.
  let actions = 0;
  for (; actions < 400; actions++) {
    await ready(page);
    const turn = await page.evaluate(() => document.body.dataset.turn);
    if (turn === "over") break;
    const a = await page.evaluate((k) => {
      const legal = page.session.legal;
      return legal[k % legal.length];
    }, actions * 7);
    const n = await page.locator("#history li").count();
    if (a.from) {
      await page.click(`svg#board rect.hit[data-point="${a.from}"]`);
    }
    await page.click(`svg#board rect.hit[data-point="${a.to}"]`);
    await page.waitForFunction((m) => document.querySelectorAll("#history li").length > m, n, { timeout: STEP_TIMEOUT });
  }
  await ready(page);
  st = await boardState(page);
  console.log(`     the game ended after ${actions} more actions by clicks: ${st.status}`);
  check(st.turn === "over" && st.status.startsWith("Game over"), `the game ends (${st.status})`);
  await shot(page, "liuzhou-game-over");

  // The record downloads and lists the actions.
  const href = await page.getAttribute("#record", "href");
  const rec = await page.request.get(new URL(href, base).toString());
  check(rec.ok(), "record downloads");
  const text = await rec.text();
  check(text.includes("[StartLFEN ") && text.includes("[Game \"Liuzhou\"]"), "record has its LFEN tags");
  check(!text.includes("[Result \"*\"]"), "the record has the result");
  check(await page.locator("#eval-text").textContent() !== "", "evaluation text shown");
}

async function xiangqi(page, base) {
  // The default engine: the shipped network.
  await openGame(page, base, "xiangqi", "first", 3, null);
  check(await page.inputValue("#agent") === "net", "Xiangqi defaults to its network");
  const st = await boardState(page);
  check(Object.keys(st.cells).length === 90, "90 points");
  check(st.cells["h2"] && st.cells["h2"].toUpperCase() === "C", "a red cannon on h2");
  await page.click('svg#board rect.hit[data-point="h2"]');
  check(await page.locator("svg#board circle.dest").count() > 0, "the cannon's moves are shown");
  await shot(page, "xiangqi-selected");
  await page.click('svg#board rect.hit[data-point="e2"]');
  await page.waitForFunction(() => document.querySelectorAll("#history li").length >= 2, null, { timeout: STEP_TIMEOUT });
  await ready(page);
  const after = await boardState(page);
  check(after.cells["e2"] && after.cells["e2"].toUpperCase() === "C" && after.cells["h2"] === "", "the cannon moved h2-e2");
  await shot(page, "xiangqi-after-move");

  // Resigning asks first, then ends the game for the engine; the record says why.
  let asked = "";
  page.once("dialog", (d) => { asked = d.message(); d.accept(); });
  await page.click("#resign");
  await page.waitForFunction(() => document.body.dataset.turn === "over", null, { timeout: STEP_TIMEOUT });
  const over = await boardState(page);
  check(asked.includes("Resign"), `a confirmation was asked (${asked})`);
  check(over.status.includes("Black wins") && over.status.includes("Red resigned"), `the status says who resigned (${over.status})`);
  check(await page.locator("#resign").isDisabled(), "no second resignation");
  const rec = await page.request.get(new URL(await page.getAttribute("#record", "href"), base).toString());
  check((await rec.text()).includes("{Red resigned} 0-1"), "the PGN says Red resigned");
  check((await page.locator("#history li").first().textContent()).includes("炮二平五"), "moves in Chinese notation");

  // Playing Black, the person sees Black at the bottom.
  await openGame(page, base, "xiangqi", "second", 3, "random");
  const y = (p) => page.evaluate((q) => Number(document.querySelector(`svg#board rect.hit[data-point="${q}"]`).getAttribute("y")), p);
  check(await y("e9") > await y("e0"), "Black's general is drawn at the bottom");
  await shot(page, "xiangqi-as-black");
}

async function go(page, base) {
  await openGame(page, base, "go", "first", 5);
  const st = await boardState(page);
  const n = Math.round(Math.sqrt(Object.keys(st.cells).length));
  check(n * n === Object.keys(st.cells).length, "a square board");
  check(await page.locator("svg#board circle.star").count() > 0, "star points drawn");
  check(await page.locator('#extra-actions button[data-action="pass"]').count() === 1, "a pass button");
  const centre = st.active.find((p) => p === "E5") || st.active[Math.floor(st.active.length / 2)];
  await page.hover(`svg#board rect.hit[data-point="${centre}"]`);
  await page.click(`svg#board rect.hit[data-point="${centre}"]`);
  await page.waitForFunction(() => document.querySelectorAll("#history li").length >= 2, null, { timeout: STEP_TIMEOUT });
  await ready(page);
  const after = await boardState(page);
  check(["B", "X"].includes(after.cells[centre]), `a black stone on ${centre}`);
  await shot(page, "go-after-move");

  // On to the end by clicks: points for a while, then the pass button until the game stops
  // (two passes in a row, or the move cap).
  let moves = 1;
  for (; moves < 400; moves++) {
    await ready(page);
    if (await page.evaluate(() => document.body.dataset.turn) === "over") break;
    const n = await page.locator("#history li").count();
    const a = await page.evaluate((k) => {
      const pts = page.session.legal.filter((x) => x.to);
      return k < 20 && pts.length ? pts[(k * 13) % pts.length] : { action: "pass" };
    }, moves);
    if (a.to) await page.click(`svg#board rect.hit[data-point="${a.to}"]`);
    else await page.click('#extra-actions button[data-action="pass"]');
    await page.waitForFunction((m) => document.querySelectorAll("#history li").length > m, n, { timeout: STEP_TIMEOUT });
  }
  await ready(page);
  const end = await boardState(page);
  console.log(`     the game ended after ${moves} of our moves: ${end.status}`);
  check(end.turn === "over" && end.status.startsWith("Game over"), `the game ends (${end.status})`);
  check(/both passed|move cap/.test(end.status), `the status says why (${end.status})`);
  await shot(page, "go-game-over");
  const rec = await page.request.get(new URL(await page.getAttribute("#record", "href"), base).toString());
  const sgf = await rec.text();
  check(sgf.startsWith("(;") && /RE\[[BW]\+/.test(sgf), `an SGF record with the result: ${sgf.slice(0, 80)}`);
}

// Choosing another game while the engine thinks replaces the game at once. In watch mode the
// engine plays both sides, so the page is always waiting for it.
async function newGameWhileThinking(page, base) {
  await page.goto(`${base}?game=go&side=none&seed=1&agent=mcts&strength=${STRENGTH}`);
  await page.waitForSelector('svg#board[data-game="go"]', { timeout: STEP_TIMEOUT });
  await page.waitForFunction(() => document.querySelectorAll("#history li").length >= 2, null, { timeout: STEP_TIMEOUT });
  await page.selectOption("#game", "liuzhou");
  await page.waitForSelector('svg#board[data-game="liuzhou"]', { timeout: STEP_TIMEOUT });
  const st = await boardState(page);
  check(Object.keys(st.cells).length === 36, "the Liuzhou board replaced Go's");
  check(await page.inputValue("#game") === "liuzhou", "the form and the board show one game");
}

// ---- levels, language, review ----

// A whole game of random moves through the API, and its record as the server writes it.
async function randomRecord(base, game, seed) {
  const post = async (path, body) => {
    const r = await fetch(`${base}${path}`, {
      method: "POST",
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    check(r.ok, `${path}: ${r.status} ${await r.clone().text()}`);
    return r.json();
  };
  let s = await post("api/sessions", { game, side: "none", agent: "random", seed });
  const id = s.id;
  while (!s.outcome) s = (await post(`api/sessions/${id}/engine`)).session;
  const text = await (await fetch(`${base}api/sessions/${id}/record`)).text();
  return { text, actions: s.history.length };
}

// The person's one action by clicks: the first legal one on a point.
async function clickSomeAction(page) {
  const n = await page.locator("#history li").count();
  const a = await page.evaluate(() => page.session.legal.find((x) => x.to));
  if (a.from) await page.click(`svg#board rect.hit[data-point="${a.from}"]`);
  await page.click(`svg#board rect.hit[data-point="${a.to}"]`);
  await page.waitForFunction((m) => document.querySelectorAll("#history li").length > m, n, { timeout: STEP_TIMEOUT });
  await ready(page);
  return a.action;
}

async function openLevel(page, base, game, level, seed) {
  await page.goto(`${base}?game=${game}&side=first&seed=${seed}&level=${level}&analysis=${ANALYSIS}`);
  await page.waitForSelector(`svg#board[data-game="${game}"]`, { timeout: STEP_TIMEOUT });
  await ready(page);
  check(await page.inputValue("#strength") === `L:${level}`, `the level ${level} is chosen`);
  check(await page.locator("#agent").isDisabled(), "a level names its engine");
}

const hasChinese = (text) => /[\u4e00-\u9fff]/.test(text);

async function language(page, base, game, info) {
  await openLevel(page, base, game, info.levels[0].key, 1);
  await page.selectOption("#lang", "zh");
  check(await page.evaluate(() => document.documentElement.lang) === "zh-CN", "<html lang> follows the choice");
  check(await page.locator("#new").textContent() === "新对局", "the form is in Chinese");
  const status = await page.locator("#status").textContent();
  check(hasChinese(status), `the status is in Chinese: ${status}`);
  const option = await page.locator("#strength option:checked").textContent();
  check(option.includes(info.levels[0].chinese) && option.includes("Elo"), `the level's Chinese name and Elo: ${option}`);
  if (game === "liuzhou") {
    const phase = await page.locator("#current-phase").textContent();
    check(phase.startsWith("落子"), `the phase in Chinese as the rules name it: ${phase}`);
  }
  await shot(page, `${game}-zh`);
  // Remembered across visits.
  await page.reload();
  await ready(page);
  check(await page.evaluate(() => document.documentElement.lang) === "zh-CN", "the choice is remembered");
  await page.selectOption("#lang", "en");
  check(await page.evaluate(() => document.documentElement.lang) === "en", "back to English");
  check(await page.locator("#new").textContent() === "New game", "the form is in English");
}

async function levels(page, base, game, info) {
  const weakest = info.levels[0].key;
  const strongest = info.levels[info.levels.length - 1].key;
  for (const [level, seed] of [[weakest, 2], [strongest, 3]]) {
    await openLevel(page, base, game, level, seed);
    const t0 = Date.now();
    const played = await clickSomeAction(page);
    await page.waitForFunction(() => document.body.dataset.turn !== "engine", null, { timeout: STEP_TIMEOUT });
    const n = await page.locator("#history li").count();
    console.log(`     ${level}: played ${played}, ${n} actions after ${Date.now() - t0} ms`);
    check(n >= 2, `the ${level} level answered (${n} actions)`);
  }
  // The last game, resigned, is reviewed from the page.
  page.once("dialog", (d) => d.accept());
  await page.click("#resign");
  await page.waitForFunction(() => document.body.dataset.turn === "over", null, { timeout: STEP_TIMEOUT });
  check(await page.locator("#review-game").isEnabled(), "a finished game can be reviewed");
  await page.click("#review-game");
  await page.waitForFunction(() => document.body.dataset.review === "done", null, { timeout: STEP_TIMEOUT });
  const moves = await page.evaluate(() => page.review.positions.length - 1);
  check(moves >= 2, `the review holds the game's moves (${moves})`);
  check(await page.evaluate(() => page.review.result) === "second", "the review has the result");
  await page.click("#rv-back");
  check(await page.locator("#review-panel").isHidden(), "back to play");
}

async function review(page, base, game) {
  const { text, actions } = await randomRecord(base, game, 9);
  await page.goto(`${base}?game=${game}&side=first&seed=1&agent=random&analysis=${ANALYSIS}`);
  await ready(page);
  await page.click("#load summary");
  await page.fill("#load-text", text);
  await page.click("#load-open");
  await page.waitForSelector('body[data-review]', { timeout: STEP_TIMEOUT });
  check(await page.evaluate(() => page.review.positions.length) === actions + 1, `every position of ${actions} actions`);
  // The analysis runs with a progress, then the graph covers every position.
  await page.waitForFunction(() => document.body.dataset.review === "done", null, { timeout: 10 * STEP_TIMEOUT });
  check(/done/.test(await page.locator("#rv-progress-text").textContent()), "the progress says done");
  check(await page.locator("#graph path.graph-line").count() >= 1, "the graph is drawn");
  check(await page.getAttribute("#graph", "data-points") === String(actions + 1), "the graph has every position");
  // Stepping: buttons and arrow keys.
  const at = () => page.evaluate(() => Number(document.body.dataset.at));
  await page.click("#rv-next");
  await page.click("#rv-next");
  check(await at() === 2, "two steps forward by buttons");
  await page.keyboard.press("ArrowRight");
  check(await at() === 3, "a step by the arrow key");
  await page.keyboard.press("ArrowLeft");
  await page.click("#rv-prev");
  check(await at() === 1, "back by key and button");
  await page.keyboard.press("End");
  check(await at() === actions, "End goes to the last position");
  await page.click("#rv-first");
  check(await at() === 0, "the first button goes to the start");
  // The played move against the engine's, at the biggest mistake if there is one.
  const mistakes = await page.evaluate(() => page.review.mistakes);
  const k = mistakes.length ? mistakes[0] : Math.floor(actions / 2);
  for (let i = 0; i < k; i++) await page.keyboard.press("ArrowRight");
  check(await at() === k, `at position ${k}`);
  const info = await page.locator("#rv-info").textContent();
  check(/Played: /.test(info), `the move played is named: ${info}`);
  if (mistakes.length) {
    check(/Mistake/.test(info) && /Engine prefers: /.test(info), `the mistake and the engine's move: ${info}`);
    check(await page.locator("svg#board rect.best").count() >= 1, "the engine's move is marked on the board");
    check(await page.locator("#rv-mistakes li a").count() === Math.min(6, mistakes.length), "the mistakes are listed");
  }
  if (game === "go") {
    const lead = await page.locator("#eval-text").textContent();
    console.log(`     Go evaluation: ${lead}`);
  }
  await page.locator("main").screenshot({ path: resolve(IMAGES, `review-${game}.png`) });
  console.log(`     screenshot ${resolve(IMAGES, `review-${game}.png`)}`);
  // The review's record loads back as the same game.
  const rec = await page.request.get(new URL(await page.getAttribute("#rv-record", "href"), base).toString());
  const again = await (await fetch(`${base}api/reviews`, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ game, record: await rec.text() }),
  })).json();
  check(again.positions && again.positions.length === actions + 1, "the exported record loads back");
}

const MALFORMED = {
  liuzhou: ["c3 d4\nzz9", 2],
  xiangqi: ["1. h2e2 h9g7\n2. h2h9", 2],
  go: ["(;GM[1]SZ[9]\n;B[ee]\n;W[ee", 3],
};

async function malformed(page, base, game) {
  await page.goto(`${base}?game=${game}&side=first&seed=1&agent=random`);
  await ready(page);
  await page.click("#load summary");
  const [text, line] = MALFORMED[game];
  await page.fill("#load-text", text);
  await page.click("#load-open");
  await page.waitForFunction(() => document.body.dataset.loadError, null, { timeout: STEP_TIMEOUT });
  check(await page.evaluate(() => document.body.dataset.loadError) === "bad_record", "refused as a bad record");
  const shown = await page.locator("#load-error").textContent();
  check(shown.includes(`line ${line}`), `the line is shown: ${shown}`);
  check(await page.locator("#review-panel").isHidden(), "no review opened");
  await page.selectOption("#lang", "zh");
  await page.click("#load-open");
  await page.waitForFunction(() => /第 \d+ 行/.test(document.getElementById("load-error").textContent), null, { timeout: STEP_TIMEOUT });
  await page.selectOption("#lang", "en");
}

// A phone's screen: the board first at the full width, the controls below, a game by taps.
async function phone(browser, base) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  try {
    await page.goto(`${base}?game=liuzhou&side=first&seed=4&agent=random`);
    await page.waitForSelector('svg#board[data-game="liuzhou"]', { timeout: STEP_TIMEOUT });
    await ready(page);
    const board = await page.locator("#board").boundingBox();
    const aside = await page.locator("aside").boundingBox();
    check(board.width >= 0.9 * 390 - 20 && board.width <= 390, `the board fills the width (${board.width})`);
    check(board.y < aside.y, "the board comes before the controls");
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    check(width <= 390, `nothing wider than the screen (${width})`);
    for (const p of ["c3", "d4"]) {
      const n = await page.locator("#history li").count();
      await page.tap(`svg#board rect.hit[data-point="${p}"]`);
      await page.waitForFunction((m) => document.querySelectorAll("#history li").length > m + 1, n, { timeout: STEP_TIMEOUT });
      await ready(page);
    }
    const cells = await boardState(page);
    check(cells.cells.c3 === "B" && cells.cells.d4 === "B", "stones placed by taps");
    await page.screenshot({ path: resolve(IMAGES, "phone.png") });
    console.log(`     screenshot ${resolve(IMAGES, "phone.png")}`);
  } finally {
    await context.close();
  }
}

// ---- main ----

const { child, base } = await startServer();
let browser;
try {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const context = await browser.newContext({ viewport: { width: 1200, height: 860 } });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e}`));
  // The malformed records' 422s are refusals the test asks for; the browser logs each.
  const asked = (text) => /status of 422/.test(text);
  page.on("console", (m) => { if (m.type() === "error" && !asked(m.text())) problems.push(`console error: ${m.text()}`); });
  // The page must reach nothing but the server that served it.
  page.on("request", (r) => { if (!r.url().startsWith(base)) problems.push(`request elsewhere: ${r.url()}`); });

  const served = await (await fetch(`${base}api/games`)).json();
  const names = served.games.map((g) => g.name);
  console.log(`server at ${base} plays: ${names.join(", ")}`);
  for (const g of REQUIRED) {
    await step(`${g} is served`, async () => check(names.includes(g), `${g} in ${names}`));
  }
  const tests = { liuzhou, xiangqi, go };
  for (const g of ["liuzhou", "xiangqi", "go"]) {
    if (names.includes(g)) await step(`${g} by clicks`, () => tests[g](page, base));
    else console.log(`skip ${g}: not served by this build`);
  }
  if (names.includes("go") && names.includes("liuzhou")) {
    await step("a new game while the engine thinks", () => newGameWhileThinking(page, base));
  }
  for (const info of served.games) {
    const g = info.name;
    await step(`${g}: switching language`, () => language(page, base, g, info));
    if (info.levels.length) await step(`${g}: the weakest and the strongest level`, () => levels(page, base, g, info));
    else console.log(`skip ${g} levels: none served`);
    await step(`${g}: a loaded record reviewed, stepped through, graphed`, () => review(page, base, g));
    await step(`${g}: a malformed record refused`, () => malformed(page, base, g));
  }
  if (names.includes("liuzhou")) await step("a phone-sized screen, played by taps", () => phone(browser, base));
  await step("no page errors and no requests elsewhere", async () => check(problems.length === 0, problems.join("; ")));
} finally {
  if (browser) await browser.close();
  child.kill("SIGINT");
}

const failed = results.filter(([, ok]) => !ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
