#!/usr/bin/env python3
"""Where a Xiangqi player loses material: each of its moves in a match PGN, scored by
Fairy-Stockfish before and after at a fixed depth.

    blunders.py GAMES.pgn NAME [--depth D] [--drop CP]

GAMES.pgn is `engine match --pgn` output (ICCS moves, a FEN tag); NAME is a substring of the
player's name in the Red/Black tags. A move is a blunder when it lowers its side's score by at
least CP centipawns (300: about a horse or a cannon) or walks into a forced mate. Prints one
line per game (number, the player's colour, its score, plies, blunders, and the first blunder
as ply, score before, score after), then a summary of the lost games. Fairy-Stockfish is
$FAIRY_STOCKFISH, else `fairy-stockfish` on the PATH or in /usr/games.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess

MATE = 100000


class Teacher:
    def __init__(self, depth):
        exe = (os.environ.get("FAIRY_STOCKFISH") or shutil.which("fairy-stockfish")
               or "/usr/games/fairy-stockfish")
        try:
            self.p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, bufsize=1)
        except OSError as e:
            raise SystemExit(f"cannot start Fairy-Stockfish ({exe}): {e}")
        self.depth = depth
        self.send("uci")
        self.wait("uciok")
        self.send("setoption name UCI_Variant value xiangqi")
        self.send("isready")
        self.wait("readyok")

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def wait(self, prefix):
        while not (line := self.p.stdout.readline()).startswith(prefix):
            if not line:
                raise SystemExit("fairy-stockfish ended")
        return line

    def score(self, fen, moves):
        """The side to move's score in centipawns (a mate in n: ±(MATE − n)); None when it has
        no move."""
        self.send(f"position fen {fen}" + (f" moves {' '.join(moves)}" if moves else ""))
        self.send(f"go depth {self.depth}")
        score = None
        while True:
            line = self.p.stdout.readline()
            if line.startswith("bestmove"):
                return None if "(none)" in line else score
            m = re.search(r" score (cp|mate) (-?\d+)\b(?! (upper|lower)bound)", line)
            if m:
                v = int(m.group(2))
                score = v if m.group(1) == "cp" else (MATE - abs(v)) * (1 if v > 0 else -1)


def uci_move(iccs):
    """ICCS `H2-E2` (ranks 0–9) to Fairy-Stockfish's `h3e3` (ranks 1–10)."""
    a, b = iccs.lower().split("-")
    return f"{a[0]}{int(a[1:]) + 1}{b[0]}{int(b[1:]) + 1}"


def games(text):
    for g in re.split(r"\n(?=\[Game )", text):
        tags = dict(re.findall(r'\[(\w+) "([^"]*)"\]', g))
        body = re.sub(r"\{.*?\}", "", re.sub(r"\[.*?\]\n", "", g), flags=re.S)
        if "Result" in tags:
            yield tags, re.findall(r"[A-I]\d-[A-I]\d", body)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pgn", help="games of `engine match --pgn`")
    ap.add_argument("name", help="a substring of the player's name in the Red/Black tags")
    ap.add_argument("--depth", type=int, default=10, help="Fairy-Stockfish's depth (10)")
    ap.add_argument("--drop", type=int, default=300, help="centipawns a blunder gives away (300)")
    a = ap.parse_args()
    try:
        with open(a.pgn, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise SystemExit(f"{a.pgn}: {e}")
    teacher = Teacher(a.depth)
    rows = []
    for n, (tags, moves) in enumerate(games(text)):
        fen = tags.get("FEN", "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1")
        red = a.name in tags.get("Red", "")
        if not red and a.name not in tags.get("Black", ""):
            raise SystemExit(f"{a.pgn}: game {n + 1}: {a.name!r} names neither player "
                             f"(Red {tags.get('Red')!r}, Black {tags.get('Black')!r})")
        red_first = fen.split()[1] == "w"
        played, first, count = [], None, 0
        before = teacher.score(fen, played)
        for i, m in enumerate(moves):
            ours = (red_first == (i % 2 == 0)) == red
            played.append(uci_move(m))
            after = teacher.score(fen, played)
            if after is None:
                break
            mover_after = -after
            if ours and before is not None and (
                before - mover_after >= a.drop or (mover_after <= -MATE // 2 < before)
            ):
                count += 1
                first = first or (i, before, mover_after)
            before = after
        result = tags["Result"]
        score = {"1-0": float(red), "0-1": float(not red)}.get(result, 0.5)
        rows.append((score, count, first))
        print(n, "Red" if red else "Black", score, len(moves), count, first, flush=True)
    teacher.send("quit")
    lost = [r for r in rows if r[0] == 0]
    firsts = [r[2] for r in lost if r[2]]
    print(f"{len(rows)} games, {len(lost)} lost; {len(firsts)} of them with a blunder "
          f"(≥ {a.drop} cp at depth {a.depth}), {sum(1 for f in firsts if f[1] > -200)} of those "
          f"first made from a position not already lost (> −200 cp)")
    if firsts:
        print(f"first blunder of a lost game: median ply {statistics.median(f[0] for f in firsts)}; "
              f"blunders a game: {statistics.mean(r[1] for r in rows):.1f} "
              f"(lost games {statistics.mean(r[1] for r in lost):.1f})")


if __name__ == "__main__":
    main()
