// Browser test of the page `engine serve` serves: headless Chromium driven by playwright-core.
//
// Starts the engine binary on a free loopback port, plays a whole Liuzhou placement phase by
// clicks (marking a stone on the way), makes a Xiangqi move and a Go move when the server offers
// those games, takes screenshots, and exits non-zero on any failure.
//
// Environment: ENGINE_BIN (default ../../../target/debug/engine), CHROMIUM (default
// /usr/bin/chromium), SCREENSHOTS (default ../../../target/screenshots), REQUIRE_GAMES (a
// comma-separated list of games that must be served; default "liuzhou,xiangqi,go").

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
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console error: ${m.text()}`); });
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
  await step("no page errors and no requests elsewhere", async () => check(problems.length === 0, problems.join("; ")));
} finally {
  if (browser) await browser.close();
  child.kill("SIGINT");
}

const failed = results.filter(([, ok]) => !ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
