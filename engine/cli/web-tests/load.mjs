// Load on `engine serve`: clients playing and reviewing at once through the JSON API for a
// while; fails on any server error (5xx) or a refusal the clients did not ask for, and prints
// the requests answered, the server's resident memory (sampled each second from /proc) and
// the engine moves and positions analysed.
//
//   node engine/cli/web-tests/load.mjs          # 16 clients (8 players, 8 reviewers), 60 s
//
// Environment: ENGINE_BIN (default ../../../target/debug/engine), CLIENTS (16), SECONDS (60).

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const ENGINE = process.env.ENGINE_BIN || resolve(here, "../../../target/debug/engine");
const CLIENTS = Number(process.env.CLIENTS || 16);
const SECONDS = Number(process.env.SECONDS || 60);
const GAMES = ["liuzhou", "xiangqi", "go"];

function startServer() {
  return new Promise((ok, fail) => {
    const child = spawn(ENGINE, ["serve", "--addr", "127.0.0.1:0"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, RUST_LOG: process.env.RUST_LOG || "warn" },
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) ok({ child, base: m[1] });
    });
    child.stderr.on("data", (d) => process.stderr.write(`[engine] ${d}`));
    child.on("error", fail);
    child.on("exit", (code) => fail(new Error(`engine exited with ${code}: ${out}`)));
  });
}

const stats = { requests: 0, byStatus: {}, unexpected: [], engineMoves: 0, games: 0, reviews: 0, analysed: 0 };

// One request; `allowed` lists the refusals this client may meet (e.g. 409 while a review runs).
async function call(base, method, path, body, allowed = []) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  stats.requests++;
  stats.byStatus[r.status] = (stats.byStatus[r.status] || 0) + 1;
  const text = await r.text();
  if (!r.ok && !allowed.includes(r.status)) stats.unexpected.push(`${method} ${path}: ${r.status} ${text.slice(0, 200)}`);
  if (r.status === 204 || !text) return null;
  return r.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
}

const pick = (list, k) => list[k % list.length];

// A player: games at a level (or at visits, as old links ask), the person's actions random,
// the engine's by the API, one game after another.
async function player(base, k, until) {
  const info = await call(base, "GET", "api/games");
  let round = 0;
  while (Date.now() < until) {
    const g = info.games[(k + round) % info.games.length];
    const engine = g.levels.length && round % 2 === 0
      ? { level: pick(g.levels, k + round).key }
      : { agent: "mcts", strength: 50 };
    let s = await call(base, "POST", "api/sessions", { game: g.name, side: "first", seed: k * 100 + round, ...engine });
    if (!s) return;
    let steps = 0;
    while (s && !s.outcome && Date.now() < until && steps < 80) {
      if (s.engine_to_act) {
        const r = await call(base, "POST", `api/sessions/${s.id}/engine`);
        s = r && r.session;
        stats.engineMoves++;
      } else {
        s = await call(base, "POST", `api/sessions/${s.id}/play`, { action: pick(s.legal, k + steps * 7).action });
      }
      steps++;
    }
    if (s) await call(base, "DELETE", `api/sessions/${s.id}`);
    stats.games++;
    round++;
  }
}

// A reviewer: a whole random game's record loaded, analysed in the background while the
// client polls, stopped half way every other time, then dropped.
async function reviewer(base, k, until) {
  let round = 0;
  while (Date.now() < until) {
    const game = GAMES[(k + round) % GAMES.length];
    let s = await call(base, "POST", "api/sessions", { game, side: "none", agent: "random", seed: k * 1000 + round });
    while (!s.outcome) s = (await call(base, "POST", `api/sessions/${s.id}/engine`)).session;
    const record = await call(base, "GET", `api/sessions/${s.id}/record`);
    await call(base, "DELETE", `api/sessions/${s.id}`);
    const r = await call(base, "POST", "api/reviews", { game, record });
    stats.reviews++;
    await call(base, "POST", `api/reviews/${r.id}/analyse`, { strength: 32, seed: k });
    const total = r.positions.length;
    for (;;) {
      await new Promise((ok) => setTimeout(ok, 250));
      const p = await call(base, "GET", `api/reviews/${r.id}/progress`);
      if (!["queued", "running"].includes(p.status) || Date.now() >= until) {
        stats.analysed += p.analysed;
        break;
      }
      if (round % 2 === 1 && p.analysed > total / 2) {
        await call(base, "POST", `api/reviews/${r.id}/stop`);
      }
    }
    await call(base, "DELETE", `api/reviews/${r.id}`);
    round++;
  }
}

function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

const { child, base } = await startServer();
const samples = [];
const sampler = setInterval(() => samples.push(rssMb(child.pid)), 1000);
const t0 = Date.now();
const until = t0 + SECONDS * 1000;
const players = Math.ceil(CLIENTS / 2);
const clients = [];
for (let k = 0; k < CLIENTS; k++) {
  clients.push((k < players ? player : reviewer)(base, k, until).catch((e) => stats.unexpected.push(`client ${k}: ${e}`)));
}
await Promise.all(clients);
const elapsed = (Date.now() - t0) / 1000;
samples.push(rssMb(child.pid));
clearInterval(sampler);
child.kill("SIGINT");

const peak = Math.max(...samples);
console.log(`${CLIENTS} clients (${players} playing, ${CLIENTS - players} reviewing) for ${elapsed.toFixed(0)} s`);
console.log(`requests ${stats.requests} (${JSON.stringify(stats.byStatus)}); games ${stats.games}, engine moves ${stats.engineMoves}; reviews ${stats.reviews}, positions analysed ${stats.analysed}`);
console.log(`server RSS: start ${samples[0].toFixed(0)} MB, peak ${peak.toFixed(0)} MB, end ${samples[samples.length - 1].toFixed(0)} MB`);
if (stats.unexpected.length) {
  console.log(`FAIL: ${stats.unexpected.length} unexpected answers:\n  ${stats.unexpected.slice(0, 10).join("\n  ")}`);
  process.exit(1);
}
console.log("ok: no server error, no unexpected refusal");
