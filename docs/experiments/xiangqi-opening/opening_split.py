#!/usr/bin/env python3
"""A Xiangqi UCI player made of two: the network plays the opening, alpha-beta the rest.

    opening_split.py PLIES MODEL

Two `engine uci` children ($ENGINE, else `engine` on the PATH), both with a 16 MiB table as
`engine match`'s `alphabeta` has: one with `--agent net --model MODEL` and `Guard` 0 (the
network alone, without alpha-beta's check), one with `--agent alphabeta`. Both see every
`position`; `go` goes to the network while fewer than PLIES plies of the game have been played
(counted from the move number of the position's FEN), to alpha-beta from then on. Moves are
ICCS with ranks 0-9, as `engine uci` speaks them.
"""
import os
import subprocess
import sys

ENGINE = os.environ.get("ENGINE", "engine")


def start(args):
    return subprocess.Popen(
        [ENGINE, "uci", "--hash", "16"] + args,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, bufsize=1)


def send(child, line):
    child.stdin.write(line + "\n")
    child.stdin.flush()


def until(child, word):
    """Reads the child's lines up to the one that starts with `word`; returns that line."""
    while True:
        line = child.stdout.readline()
        if not line:
            raise SystemExit(f"{ENGINE} uci ended before answering {word}")
        if line.split()[:1] == [word]:
            return line.strip()


def plies(words):
    """Plies of the game at a `position` command: its moves and its FEN's move number."""
    moves = words[words.index("moves") + 1:] if "moves" in words else []
    played = len(moves)
    if words[1] == "fen":
        fen = words[2:words.index("moves")] if "moves" in words else words[2:]
        if len(fen) >= 6:
            played += (int(fen[5]) - 1) * 2 + (fen[1] == "b")
    return played


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    limit, model = int(sys.argv[1]), sys.argv[2]
    net = start(["--agent", "net", "--model", model])
    ab = start(["--agent", "alphabeta"])
    played = 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "uci":
            for child in (net, ab):
                send(child, "uci")
                until(child, "uciok")
            send(net, "setoption name Guard value 0")
            print("id name opening-split", flush=True)
            print("uciok", flush=True)
        elif words[0] == "isready":
            for child in (net, ab):
                send(child, "isready")
                until(child, "readyok")
            print("readyok", flush=True)
        elif words[0] == "go":
            child = net if played < limit else ab
            send(child, line.strip())
            print(until(child, "bestmove"), flush=True)
        elif words[0] == "quit":
            for child in (net, ab):
                send(child, "quit")
            break
        else:
            if words[0] == "position":
                played = plies(words)
            for child in (net, ab):
                send(child, line.strip())


if __name__ == "__main__":
    main()
