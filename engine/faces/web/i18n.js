// The page's words in English and Chinese. The API speaks English identifiers (games, sides,
// phases, error codes); everything a person reads is looked up here, in the language chosen
// from the browser's and remembered once switched.
"use strict";

const WORDS = {
  en: {
    "title": "Play the engine",
    "lang": "Language",
    "form.game": "Game",
    "form.side": "You play",
    "form.agent": "Engine",
    "form.strength": "Strength",
    "form.new": "New game",
    "side.none": "nobody (watch)",
    "visits": "{n} visits",
    "level": "{name} (Elo {elo})",
    "levels": "Levels",
    "action.pass": "pass",
    "visits.group": "Visits per move",
    "error.code.unknown_level": "Unknown level: {reason}",
    "btn.undo": "Undo",
    "btn.hint": "Hint",
    "btn.hint.title": "What the engine would play in your place, at its strength",
    "btn.resign": "Resign",
    "btn.record": "Download record",
    "moves": "Moves",
    "loading": "Loading…",
    "eval.title": "The engine's evaluation (the first player's expected score)",
    "position.title": "The position in the game's text format",
    "confirm.resign": "Resign this game?",
    "busy.undo": "The engine is thinking: undo after its move.",
    "busy.resign": "The engine is thinking: resign after its move.",
    "agent.mcts": "MCTS (random playouts)",
    "agent.net": "MCTS + network",
    "agent.random": "random moves",
    "agent.alphabeta": "alpha-beta search",
    "sides.Black": "Black", "sides.White": "White", "sides.Red": "Red",
    "initial.Black": "B", "initial.White": "W", "initial.Red": "R",
    "game.liuzhou": "Liuzhou chess (六洲棋)", "game.xiangqi": "Xiangqi (象棋)", "game.go": "Go (围棋)",
    "who.you": "You ({side})",
    "who.engine": "Engine ({side})",
    "status.move": "{who} to move.",
    "status.check": " Check!",
    "status.over": "Game over: {text}{why}.",
    "status.why": " ({reason})",
    "outcome.win": "{side} wins",
    "outcome.draw": "draw",
    "lz.place": "{who}: place a stone.",
    "lz.mark": "{who}: shape formed — mark {n} of {opp}'s stones.",
    "lz.forced": "{who}: board full, nothing marked — remove one of {opp}'s stones.",
    "lz.stuck": "{who}: no step possible — remove one of {opp}'s stones.",
    "lz.move": "{who}: move a stone one step.",
    "lz.capture": "{who}: shape formed — capture {n} of {opp}'s stones.",
    "lz.counter": "{who}: counter-removal — remove one of {opp}'s stones.",
    "phases": "Phases",
    "pending": " — {n} pending",
    "phase.place": "Placement",
    "phase.place.rule": "Place stones in turn until the board is full.",
    "phase.mark": "Mark selection",
    "phase.mark.rule": "A square (2×2) earns 1 mark, a line (whole row or column) 2. Marked stones (✕) leave when the board fills.",
    "phase.forced": "Forced removal",
    "phase.forced.rule": "Board full and nothing marked: White, then Black, removes one stone.",
    "phase.move": "Movement",
    "phase.move.rule": "Move one stone one step up, down, left or right. A player with no step removes a stone instead.",
    "phase.capture": "Capture selection",
    "phase.capture.rule": "A square or line formed by a step captures 1 or 2 stones.",
    "phase.counter": "Counter-removal",
    "phase.counter.rule": "After a stuck player's removal, the opponent removes one of theirs.",
    "count.stones": "Stones on board",
    "count.placed": "Placed",
    "count.marked": "Marked",
    "count.actions": "Actions",
    "count.since": "Since capture",
    "count.lose": "Lose below",
    "count.lose.n": "{n} stones",
    "first.moves": "{title}: {side} moves first.",
    "info.komi": "komi", "info.moves": "moves", "info.passes": "passes", "info.area_score": "area score",
    "eval.none": "no evaluation yet",
    "eval.forced": "forced action: nothing to search",
    "eval.agent": "the {agent} engine gives no evaluation",
    "eval.share": "{side} {p}%",
    "eval.visits": " · {n} visits",
    "eval.nodes": " · {n} nodes",
    "eval.pv": " · PV {line}",
    "hint.text": "Hint: {action}",
    "hint.you": " · you {p}%",
    "hint.line": " · line {line}",
    "error.code.game_over": "The game is over.",
    "error.code.not_your_turn": "It is the engine's turn, not yours.",
    "error.code.not_engine_turn": "It is your turn, not the engine's.",
    "error.code.nothing_to_undo": "Nothing to undo: you have not played yet.",
    "error.code.no_person": "Nobody to resign for: the engine plays both sides.",
    "error.code.no_person_to_help": "Nobody to give a hint to: the engine plays both sides.",
    "error.code.engine_busy": "The engine is thinking in this game; wait for its move.",
    "error.code.no_session": "This game expired or was deleted; start a new one.",
    "error.code.no_review": "This review expired or was deleted; open it again.",
    "error.code.server_full": "The server is busy; try again shortly.",
    "error.code.review_running": "The analysis is already running.",
    "error.code.bad_record": "Record refused: {reason}",
    "error.code.bad_record.line": "Record refused, line {line}: {reason}",
    "error.code.too_large": "Too large for this server.",
    "error.code.too_long": "Too long: {reason}",
    "review.title": "Review",
    "review.open": "Review this game",
    "review.load": "Load a record",
    "review.load.hint": "Paste a record — SGF (Go), PGN with ICCS, WXF or Chinese moves (Xiangqi), a Liuzhou record or action list — or choose a file. It is read as a game of the kind chosen above.",
    "review.load.open": "Open record",
    "review.first": "Start", "review.prev": "Back", "review.next": "Forward", "review.last": "End",
    "review.at": "Move {k} of {n}",
    "review.start": "Start position ({n} moves)",
    "review.played": "Played: {move}",
    "review.best": "Engine prefers: {move}",
    "review.same": "The engine agrees with the move played.",
    "review.line": "line: {line}",
    "review.loss": "{side} lost {p}% of the expected score",
    "review.mistake": "Mistake",
    "review.mistakes": "Biggest mistakes",
    "review.none": "none found",
    "review.value": "{side} {p}%",
    "review.lead": "{side} leads by {n}",
    "review.territory": "Territory",
    "review.strength": "Analysis strength",
    "review.analyse": "Analyse",
    "review.stop": "Stop",
    "review.back": "Back to play",
    "review.record": "Download record",
    "review.graph": "Expected score of {side} over the game",
    "review.status.idle": "Not analysed yet.",
    "review.status.queued": "Waiting for a free engine…",
    "review.status.running": "Analysing: {k} of {n} positions ({v} visits each)…",
    "review.status.done": "Analysis done: {n} positions at {v} visits each ({engine}).",
    "review.status.stopped": "Analysis stopped at {k} of {n} positions.",
    "review.status.failed": "Analysis failed: {error}",
    "review.result": "Result: {text}{why}",
    "review.noresult": "No result recorded.",
    "review.mode": "Reviewing {title}",
  },
  zh: {
    "title": "与引擎对弈",
    "lang": "语言",
    "form.game": "棋种",
    "form.side": "执子",
    "form.agent": "引擎",
    "form.strength": "强度",
    "form.new": "新对局",
    "side.none": "不下（观战）",
    "visits": "{n} 次模拟",
    "level": "{name}（Elo {elo}）",
    "levels": "棋力等级",
    "action.pass": "停一手",
    "visits.group": "每步模拟次数",
    "error.code.unknown_level": "未知的等级：{reason}",
    "error.code.level_and_agent": "等级已决定引擎和强度，二者只能选一。",
    "btn.undo": "悔棋",
    "btn.hint": "提示",
    "btn.hint.title": "引擎以当前强度替你会走哪一步",
    "btn.resign": "认输",
    "btn.record": "下载棋谱",
    "moves": "着法",
    "loading": "加载中…",
    "eval.title": "引擎的评估（先手方的期望得分）",
    "position.title": "当前局面的文本格式",
    "confirm.resign": "确定认输吗？",
    "busy.undo": "引擎正在思考：请在它走完后悔棋。",
    "busy.resign": "引擎正在思考：请在它走完后认输。",
    "agent.mcts": "蒙特卡洛树搜索（随机模拟）",
    "agent.net": "神经网络 + 树搜索",
    "agent.random": "随机走子",
    "agent.alphabeta": "α-β 搜索",
    "sides.Black": "黑方", "sides.White": "白方", "sides.Red": "红方",
    "initial.Black": "黑", "initial.White": "白", "initial.Red": "红",
    "game.liuzhou": "六洲棋", "game.xiangqi": "象棋", "game.go": "围棋",
    "who.you": "你（{side}）",
    "who.engine": "引擎（{side}）",
    "status.move": "轮到{who}走。",
    "status.check": " 将军！",
    "status.over": "对局结束：{text}{why}。",
    "status.why": "（{reason}）",
    "outcome.win": "{side}胜",
    "outcome.draw": "和棋",
    "lz.place": "{who}：落子。",
    "lz.mark": "{who}：成形——标记{opp}的 {n} 枚棋子。",
    "lz.forced": "{who}：棋盘已满且无标记——移除{opp}的一枚棋子。",
    "lz.stuck": "{who}：无子可走——移除{opp}的一枚棋子。",
    "lz.move": "{who}：走子，一枚棋子走一步。",
    "lz.capture": "{who}：成形——吃掉{opp}的 {n} 枚棋子。",
    "lz.counter": "{who}：反移除——移除{opp}的一枚棋子。",
    "phases": "阶段",
    "pending": "——还欠 {n} 个",
    "phase.place": "落子",
    "phase.place.rule": "双方轮流落子，直到棋盘下满。",
    "phase.mark": "标记",
    "phase.mark.rule": "成方（2×2）得 1 个标记，成洲（整行或整列）得 2 个。被标记的棋子（✕）在棋盘下满时移除。",
    "phase.forced": "移除（无标记）",
    "phase.forced.rule": "棋盘下满而无标记：白方先、黑方后，各移除对方一枚棋子。",
    "phase.move": "走子",
    "phase.move.rule": "一枚棋子向上、下、左、右走一步。无子可走的一方改为移除对方一枚棋子。",
    "phase.capture": "吃子",
    "phase.capture.rule": "走子成方或成洲，吃掉对方 1 或 2 枚棋子。",
    "phase.counter": "反移除",
    "phase.counter.rule": "无子可走的一方移除之后，对方也移除其一枚棋子。",
    "count.stones": "盘上棋子",
    "count.placed": "已落子",
    "count.marked": "已标记",
    "count.actions": "步数",
    "count.since": "未吃子步数",
    "count.lose": "少于即负",
    "count.lose.n": "{n} 枚",
    "first.moves": "{title}：{side}先行。",
    "info.komi": "贴目", "info.moves": "手数", "info.passes": "连续停着", "info.area_score": "数子结果",
    "eval.none": "尚无评估",
    "eval.forced": "唯一着法：无需搜索",
    "eval.agent": "{agent} 引擎不给评估",
    "eval.share": "{side} {p}%",
    "eval.visits": " · {n} 次模拟",
    "eval.nodes": " · {n} 个节点",
    "eval.pv": " · 主要变化 {line}",
    "hint.text": "提示：{action}",
    "hint.you": " · 你 {p}%",
    "hint.line": " · 变化 {line}",
    "error.code.game_over": "对局已经结束。",
    "error.code.not_your_turn": "现在轮到引擎走，不是你。",
    "error.code.not_engine_turn": "现在轮到你走，不是引擎。",
    "error.code.nothing_to_undo": "没有可悔的棋：你还没有走。",
    "error.code.no_person": "引擎执双方，没有人可以认输。",
    "error.code.no_person_to_help": "引擎执双方，没有人需要提示。",
    "error.code.engine_busy": "引擎正在思考这一局，请等它走完。",
    "error.code.no_session": "这局已过期或被删除，请开新局。",
    "error.code.no_review": "这次复盘已过期或被删除，请重新打开。",
    "error.code.server_full": "服务器繁忙，请稍后再试。",
    "error.code.review_running": "分析已在进行。",
    "error.code.bad_record": "无法读取棋谱：{reason}",
    "error.code.bad_record.line": "无法读取棋谱，第 {line} 行：{reason}",
    "error.code.too_large": "内容太大，服务器不接受。",
    "error.code.too_long": "棋谱太长：{reason}",
    "error.code.unreadable_action": "无法识别的着法：{reason}",
    "error.code.illegal_action": "不合规则的着法：{reason}",
    "error.code.engine_failed": "引擎出错：{reason}",
    "error.code.unknown_agent": "未知的引擎：{reason}",
    "error.code.bad_strength": "强度超出范围：{reason}",
    "error.code.no_model": "该棋种没有加载神经网络。",
    "error.code.unknown_game": "未知的棋种：{reason}",
    "error.code.bad_side": "未知的执子方：{reason}",
    "error.code.unavailable": "服务暂不可用：{reason}",
    "error.code.internal": "服务器出错：{reason}",
    "error.code.bad_request": "请求有误：{reason}",
    "error.code.not_found": "找不到：{reason}",
    "review.title": "复盘",
    "review.open": "复盘本局",
    "review.load": "载入棋谱",
    "review.load.hint": "粘贴棋谱——围棋 SGF，象棋 PGN（ICCS、WXF 或中文记谱），六洲棋棋谱或着法列表——或选择文件。按上方所选棋种读取。",
    "review.load.open": "打开棋谱",
    "review.first": "开局", "review.prev": "后退", "review.next": "前进", "review.last": "终局",
    "review.at": "第 {k} / {n} 手",
    "review.start": "开局（共 {n} 手）",
    "review.played": "实战：{move}",
    "review.best": "引擎推荐：{move}",
    "review.same": "引擎与实战着法一致。",
    "review.line": "变化：{line}",
    "review.loss": "{side}损失了 {p}% 的期望得分",
    "review.mistake": "失误",
    "review.mistakes": "最大失误",
    "review.none": "未发现",
    "review.value": "{side} {p}%",
    "review.lead": "{side}领先 {n} 目",
    "review.territory": "地盘",
    "review.strength": "分析强度",
    "review.analyse": "分析",
    "review.stop": "停止",
    "review.back": "返回对弈",
    "review.record": "下载棋谱",
    "review.graph": "{side}在全局中的期望得分",
    "review.status.idle": "尚未分析。",
    "review.status.queued": "等待空闲引擎…",
    "review.status.running": "分析中：{k} / {n} 个局面（每个 {v} 次模拟）…",
    "review.status.done": "分析完成：{n} 个局面，每个 {v} 次模拟（{engine}）。",
    "review.status.stopped": "分析已停止：{k} / {n} 个局面。",
    "review.status.failed": "分析失败：{error}",
    "review.result": "结果：{text}{why}",
    "review.noresult": "棋谱未记结果。",
    "review.mode": "复盘：{title}",
  },
};

// Why a game ended, as the server says it (`Game::end_reason`), in Chinese; English as is.
const REASONS_ZH = [
  [/^checkmate$/, () => "将死"],
  [/^(\w+) has no legal move$/, (m) => `${side(m[1])}无着可走（困毙）`],
  [/^perpetual check by (\w+)$/, (m) => `${side(m[1])}长将`],
  [/^perpetual check by both sides$/, () => "双方长将"],
  [/^threefold repetition$/, () => "三次重复局面"],
  [/^(\d+) plies without a capture$/, (m) => `${m[1]} 步未吃子`],
  [/^(\w+) resigned$/, (m) => `${side(m[1])}认输`],
  [/^(\w+) has no stones left$/, (m) => `${side(m[1])}已无棋子`],
  [/^(\w+) has fewer than (\d+) stones$/, (m) => `${side(m[1])}棋子少于 ${m[2]} 枚`],
  [/^neither side has stones left$/, () => "双方均无棋子"],
  [/^both sides have fewer than (\d+) stones$/, (m) => `双方棋子均少于 ${m[1]} 枚`],
  [/^the move limit of (\d+) actions$/, (m) => `达到 ${m[1]} 步上限`],
  [/^(\d+) actions without a capture$/, (m) => `连续 ${m[1]} 步未吃子`],
  [/^(\w+) cannot act$/, (m) => `${side(m[1])}无法行动`],
  [/^both passed: (.*)$/, (m) => `双方连续停着：${score(m[1])}`],
  [/^move cap of (\d+) reached: (.*)$/, (m) => `达到 ${m[1]} 手上限：${score(m[2])}`],
];

let LANG = "en";

// The language: the one switched to before, else the browser's (Chinese for any zh-*).
function chooseLang() {
  let saved = null;
  try { saved = localStorage.getItem("lang"); } catch (_) { /* storage off: not remembered */ }
  if (saved && WORDS[saved]) return saved;
  const langs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"];
  return langs.some((l) => /^zh\b/i.test(l)) && !/^en\b/i.test(langs[0]) ? "zh" : "en";
}

function setLang(lang) {
  LANG = WORDS[lang] ? lang : "en";
  try { localStorage.setItem("lang", LANG); } catch (_) { /* storage off: not remembered */ }
  document.documentElement.lang = LANG === "zh" ? "zh-CN" : "en";
  document.title = t("title");
  for (const e of document.querySelectorAll("[data-i18n]")) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll("[data-i18n-title]")) e.title = t(e.dataset.i18nTitle);
  for (const e of document.querySelectorAll("[data-i18n-placeholder]")) e.placeholder = t(e.dataset.i18nPlaceholder);
}

// The text of `key` in the chosen language (English where Chinese lacks it), with `{name}`
// replaced from `vars`.
function t(key, vars) {
  const text = WORDS[LANG][key] ?? WORDS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, k) => (vars && vars[k] !== undefined ? String(vars[k]) : `{${k}}`));
}

// A side's name ("Black", "Red") in the chosen language.
function side(name) {
  return WORDS[LANG][`sides.${name}`] || name;
}

// A Go result ("W+6.5", "B+R") in the chosen language.
function score(text) {
  if (LANG !== "zh") return text;
  const m = /^([BW])\+(.*)$/.exec(text.trim());
  if (!m) return text === "0" || /^draw$/i.test(text) ? "和棋" : text;
  const who = m[1] === "B" ? "黑" : "白";
  return m[2] === "R" ? `${who}中盘胜` : `${who}胜 ${m[2]} 目`;
}

function reasonText(reason) {
  if (LANG !== "zh" || !reason) return reason;
  for (const [re, f] of REASONS_ZH) {
    const m = re.exec(reason);
    if (m) return f(m);
  }
  return reason;
}

// A refusal of the API in words: the code's text where there is one, else the server's reason.
function errorText(e) {
  if (!e) return "";
  const reason = String(e.message || e);
  const code = e.code;
  if (code === "bad_record") {
    return e.line ? t("error.code.bad_record.line", { line: e.line, reason: e.reason || reason })
      : t("error.code.bad_record", { reason: e.reason || reason });
  }
  const key = code && `error.code.${code}`;
  if (key && (WORDS[LANG][key] || WORDS.en[key])) return t(key, { reason });
  return reason;
}
