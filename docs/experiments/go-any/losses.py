#!/usr/bin/env python3
"""The games an engine match's network lost, each with GNU Go's own count of the final position
(`final_score`: it removes the stones it judges dead), the number of moves and the last moves.

  losses.py RECORD.sgf   (an SGF collection written by `engine match --sgf`)"""
import re
import subprocess
import sys
import tempfile

text = open(sys.argv[1], encoding="utf-8").read()
games = re.findall(r"\(;FF.*?\)\s*(?=\(;FF|\Z)", text, re.S)
print(len(games), "games")
with tempfile.TemporaryDirectory() as tmp:
    for k, game in enumerate(games):
        net_black = "PB[net" in game
        result = re.search(r"RE\[([^\]]*)\]", game).group(1)
        if (result[0] == "B") == net_black:
            continue
        path = f"{tmp}/game{k}.sgf"
        with open(path, "w", encoding="utf-8") as f:
            f.write(game.strip())
        out = subprocess.run(["gnugo", "--mode", "gtp", "--chinese-rules"],
                             input=f"loadsgf {path}\nfinal_score\nquit\n",
                             capture_output=True, text=True, timeout=300).stdout
        score = [line for line in out.splitlines() if line.startswith("=")][1][2:]
        moves = len(re.findall(r";[BW]\[", game))
        print(f"game {k + 1}: the network {'Black' if net_black else 'White'}, recorded {result}, "
              f"GNU Go's count {score}, {moves} moves")
