#!/usr/bin/env python3
"""How a player's Liuzhou games ended, by how their placement ended.

    placement_end.py SUBJECT RECORD... [--values N]

SUBJECT is text in the player's name as the records' Black/White tags give it (`net(`).
Each game of the records (`engine match --record`) is replayed through `engine gtp --game
liuzhou` ($ENGINE, else `engine` on the PATH), so the engine's own rules say where the
placement ended: with marks (some shape was formed, the marked stones are removed and White
moves), or with a full board and no marks (the forced removals follow, White first). Prints,
for each colour of SUBJECT, its score and its losses and draws in each kind of game. With
`--values N`, the games SUBJECT lost after forced removals are listed with its search's value
(`engine analyse`, N playouts, the default network) at the forced removal and at each of the
last eight placements before it, from SUBJECT's side.
"""
import json
import os
import re
import subprocess
import sys

ENGINE = os.environ.get("ENGINE", "engine")
RESULTS = ("1-0", "0-1", "1/2-1/2", "*")


class Gtp:
    def __init__(self):
        self.child = subprocess.Popen(
            [ENGINE, "gtp", "--game", "liuzhou", "--agent", "random"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, bufsize=1)

    def ask(self, command):
        """The answer to `command` without its `= `; exits on a refusal."""
        self.child.stdin.write(command + "\n")
        self.child.stdin.flush()
        lines = []
        while True:
            line = self.child.stdout.readline()
            if not line:
                raise SystemExit(f"{ENGINE} gtp ended while answering {command!r}")
            if line.strip():
                lines.append(line.strip())
            elif lines:
                answer = " ".join(lines)
                if not answer.startswith("="):
                    raise SystemExit(f"{command!r}: {answer}")
                return answer[1:].strip()


def games(path):
    """(tags, actions) of each game of a record file."""
    text = open(path, encoding="utf-8").read()
    for block in text.split("[Game ")[1:]:
        tags = dict(re.findall(r'\[(\w+) "([^"]*)"\]', "[Game " + block))
        body = block.split("\n\n", 1)[1] if "\n\n" in block else ""
        actions = [t for t in body.split() if not re.fullmatch(r"\d+\.", t) and t not in RESULTS]
        yield tags, actions


def subject_games(paths, subject):
    """(colour, score, tags, actions) of each game of the records SUBJECT played, the score
    from SUBJECT's side."""
    for path in paths:
        for tags, actions in games(path):
            if subject in tags.get("Black", ""):
                colour = "black"
            elif subject in tags.get("White", ""):
                colour = "white"
            else:
                continue
            score = {"1-0": 1.0, "0-1": 0.0}.get(tags["Result"], 0.5)
            yield colour, (1.0 - score if colour == "white" else score), tags, actions


def value(lfen, playouts, colour):
    """The search's value of `lfen` for `colour`."""
    out = subprocess.run(
        [ENGINE, "analyse", "--game", "liuzhou", "--position", lfen,
         "--visits", str(playouts), "--json"],
        capture_output=True, text=True, check=True).stdout
    found = json.loads(out)
    v = found["value"]
    return v if found["to_act"].lower() == colour else -v


def main():
    args = sys.argv[1:]
    playouts = None
    if "--values" in args:
        i = args.index("--values")
        playouts = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 2:
        raise SystemExit(__doc__)
    subject, paths = args[0], args[1:]
    gtp = Gtp()
    table = {}
    lost_forced = []
    for colour, score, tags, actions in subject_games(paths, subject):
        gtp.ask("liuzhou-set-lfen " + tags["StartLFEN"])
        seen, forced = [], None
        for action in actions:
            lfen = gtp.ask("liuzhou-lfen")
            phase = lfen.split()[2]
            if phase == "forced" and forced is None:
                forced = len(seen)
            if phase not in ("place", "mark", "forced"):
                break
            seen.append(lfen)
            gtp.ask(f"play {gtp.ask('liuzhou-to-move')} {action}")
        kind = "forced" if forced is not None else "marks"
        table.setdefault((colour, kind), []).append(score)
        if score == 0.0 and forced is not None:
            places = [l for l in seen[:forced] if l.split()[2] == "place"]
            lost_forced.append((colour, places[-8:] + [seen[forced]]))
    for colour in ("black", "white"):
        rows = {k: v for (c, k), v in table.items() if c == colour}
        every = [s for v in rows.values() for s in v]
        if not every:
            continue
        parts = [f"{colour}: {len(every)} games, {sum(every) / len(every):.3f}"]
        for kind in ("marks", "forced"):
            v = rows.get(kind, [])
            if v:
                parts.append(f"{kind} {len(v)} games {sum(v) / len(v):.3f} "
                             f"({v.count(0.0)} lost, {v.count(0.5)} drawn)")
        print("; ".join(parts))
    if playouts:
        for colour, lfens in lost_forced:
            values = " ".join(f"{value(l, playouts, colour):+.2f}" for l in lfens)
            print(f"lost as {colour} after forced removals: {values}   ({lfens[-1]})")


if __name__ == "__main__":
    main()
