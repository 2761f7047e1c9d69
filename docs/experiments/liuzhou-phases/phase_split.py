#!/usr/bin/env python3
"""A Liuzhou GTP player made of two: one agent places and marks, another plays the rest.

    phase_split.py PLACE_SPEC MOVE_SPEC

Each spec is an `engine gtp --game liuzhou --agent` spec with `+` where the spec has commas
(`engine match` splits a `gtp:cmd=` spec at commas). Both agents run as `engine gtp`
children ($ENGINE, else `engine` on the PATH) that see every action; `genmove` goes to the
placing agent while the phase is `place` or `mark`, to the other from then on.
"""
import os
import subprocess
import sys

ENGINE = os.environ.get("ENGINE", "engine")


def start(spec):
    return subprocess.Popen(
        [ENGINE, "gtp", "--game", "liuzhou", "--agent", spec.replace("+", ",")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, bufsize=1)


def ask(child, command):
    """Sends one command; returns its answer without the blank line that ends it."""
    child.stdin.write(command + "\n")
    child.stdin.flush()
    lines = []
    while True:
        line = child.stdout.readline()
        if not line:
            raise SystemExit(f"{ENGINE} gtp ended while answering {command!r}")
        if line.strip():
            lines.append(line.rstrip("\n"))
        elif lines:
            return "\n".join(lines)


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    placer, mover = start(sys.argv[1]), start(sys.argv[2])
    for line in sys.stdin:
        command = line.strip()
        if not command:
            continue
        words = command.split()
        # A numeric id goes back with the answer; the children are asked without it.
        ident = words.pop(0) if words[0].isdigit() and len(words) > 1 else ""
        command = " ".join(words)
        if words[0] == "genmove":
            phase = ask(placer, "liuzhou-lfen")[2:].split()[2]
            player = placer if phase in ("place", "mark") else mover
            other = mover if player is placer else placer
            answer = ask(player, command)
            action = answer[2:].strip()
            if answer.startswith("=") and action != "resign":
                ask(other, f"play {words[1]} {action}")
        else:
            answer = ask(placer, command)
            ask(mover, command)
        sys.stdout.write(answer[0] + ident + answer[1:] + "\n\n")
        sys.stdout.flush()
        if words[0] == "quit":
            break


if __name__ == "__main__":
    main()
