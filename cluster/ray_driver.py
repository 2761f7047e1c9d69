"""Self-play on a Ray cluster for `engine train` and `engine selfplay --ray`.

The engine starts this file as a child process (`python3 -u -c SOURCE`) and talks to it in
JSON, one object a line: requests on stdin, events on stdout; stderr is for people (it goes to
the engine's log). The protocol is documented in docs/cluster.md. Each self-play task runs the
engine's own `engine selfplay` on a worker; the model and (with `ship`) the engine binary reach
the workers through Ray's object store, and each task's shard comes back the same way. The
driver writes every shard itself, atomically, under the name the engine gave the task.
"""

import ctypes
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

PROTOCOL = 1
SHARD_SUFFIX = ".safetensors"


class DriverError(Exception):
    """A failure the engine is told about in an `error` event."""


def emit(out, event, **fields):
    out.write(json.dumps(dict(event=event, **fields)) + "\n")
    out.flush()


def shard_metadata(data):
    """The `__metadata__` map of safetensors bytes (8-byte little-endian header length, JSON)."""
    if len(data) < 8:
        raise DriverError("a task returned %d bytes, not a shard" % len(data))
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8:
        raise DriverError("a task returned a truncated shard")
    try:
        header = json.loads(data[8 : 8 + n])
    except ValueError as e:
        raise DriverError("a task returned a shard whose header is not JSON: %s" % e)
    return header.get("__metadata__") or {}


def stale_reason(meta, game, model_name):
    """Why a shard is not of this request's model and game, or None when it is."""
    if meta.get("game") != game:
        return "it is a %r shard, not %r" % (meta.get("game"), game)
    if meta.get("model") != model_name:
        return "it was played by %r, not %r" % (meta.get("model"), model_name)
    return None


def write_once(path, data):
    """Writes `data` at `path` unless a file is there: a temporary name in the same directory,
    fsync, then a hard link to the final name (which fails rather than replace a file), and the
    directory synced. Returns whether this call wrote it."""
    directory = os.path.dirname(path) or "."
    tmp = os.path.join(directory, ".%s.%d.tmp" % (os.path.basename(path), os.getpid()))
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    try:
        os.link(tmp, path)
        wrote = True
    except FileExistsError:
        wrote = False
    finally:
        os.unlink(tmp)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return wrote


def positions_in(line):
    """Positions played, from `engine selfplay`'s closing line (`N games, P positions ...`)."""
    m = re.search(r"(\d+) positions", line)
    return int(m.group(1)) if m else 0


def die_with_parent():
    """Makes the engine's process get SIGKILL when the worker that started it dies, so a killed
    worker leaves no engine playing on (Linux; elsewhere nothing)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    # Looked up before the fork: the child only makes the call.
    return lambda: prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def node_engine(engine):
    """The engine binary on this node: a path as given, or the shipped bytes written once per
    node under their SHA-256 (`engine` is then ["ship", digest, [object ref]])."""
    if isinstance(engine, str):
        return engine
    _, digest, holder = engine
    directory = os.path.join(tempfile.gettempdir(), "engine-ray-%s" % digest[:16])
    path = os.path.join(directory, "engine")
    if not os.path.exists(path):
        import ray

        data = ray.get(holder[0])
        os.makedirs(directory, exist_ok=True)
        tmp = "%s.%d.tmp" % (path, os.getpid())
        with open(tmp, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    return path


def run_engine(engine, model_bytes, model_name, config_text, game, games, seed):
    """Plays one task with `engine selfplay` in a directory of its own; returns the shard's
    bytes and the command's closing line."""
    with tempfile.TemporaryDirectory(prefix="engine-task-") as work:
        model = os.path.join(work, "model.onnx")
        with open(model, "wb") as f:
            f.write(model_bytes)
        config = os.path.join(work, "config.yaml")
        with open(config, "w") as f:
            f.write(config_text)
        out = os.path.join(work, "shards")
        cmd = [
            node_engine(engine), "selfplay", "--game", game, "--model", model,
            "--model-name", model_name, "--config", config, "--out", out,
            "--games", str(games), "--seed", str(seed),
        ]  # fmt: skip
        p = subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=die_with_parent()
        )
        if p.returncode < 0:
            # The engine was killed: so is this worker, which Ray counts as a lost worker and
            # retries (max_retries), where an exception would fail the task.
            print("engine selfplay died from signal %d" % -p.returncode, file=sys.stderr)
            os.kill(os.getpid(), signal.SIGKILL)
        if p.returncode != 0:
            tail = p.stderr.decode(errors="replace").strip().splitlines()[-5:]
            raise DriverError("engine selfplay failed (exit %d): %s" % (p.returncode, " | ".join(tail)))
        files = sorted(n for n in os.listdir(out) if n.endswith(SHARD_SUFFIX))
        if len(files) != 1:
            raise DriverError("engine selfplay wrote %d shards, not 1" % len(files))
        with open(os.path.join(out, files[0]), "rb") as f:
            data = f.read()
        return {"shard": data, "line": p.stdout.decode(errors="replace").strip()}


class Driver:
    """One connection to a cluster, serving requests until stdin ends."""

    def __init__(self, out):
        self.out = out
        self.ray = None
        self.remote = None
        self.engine = None

    def connect(self, req):
        try:
            import ray
        except ImportError as e:
            raise DriverError(
                "%s cannot import Ray (%s): install it with `%s -m pip install -r "
                "cluster/requirements.txt`, or name a Python that has it in selfplay.ray.python"
                % (sys.executable, e, sys.executable)
            )
        ray.init(address=req["address"], logging_level="WARNING", log_to_driver=False)
        self.ray = ray
        self.remote = ray.remote(play)
        engine = req["engine"]
        if req.get("ship", True):
            with open(engine, "rb") as f:
                data = f.read()
            digest = hashlib.sha256(data).hexdigest()
            # Nested in a list so that a task fetches the bytes only on a node without them.
            self.engine = ["ship", digest, [ray.put(data)]]
        else:
            self.engine = engine
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        emit(
            self.out, "connected", protocol=PROTOCOL, ray_version=ray.__version__,
            nodes=len(nodes), cpus=ray.cluster_resources().get("CPU", 0),
        )  # fmt: skip

    def selfplay(self, req):
        ray = self.ray
        if ray is None:
            raise DriverError("selfplay before connect")
        began = time.time()
        out_dir, game, model_name = req["out_dir"], req["game"], req["model_name"]
        with open(req["model"], "rb") as f:
            model = ray.put(f.read())
        options = dict(
            num_cpus=req["cpus_per_task"],
            max_retries=req["max_retries"],
        )
        pending, attempts, positions = {}, {}, 0

        def submit(task):
            attempts[task["task"]] = attempts.get(task["task"], 0) + 1
            ref = self.remote.options(**options).remote(
                self.engine, model, model_name, req["config"], game, task["games"], task["seed"]
            )
            pending[ref] = task

        for task in req["tasks"]:
            if os.path.exists(os.path.join(out_dir, task["file"])):
                emit(self.out, "skipped", task=task["task"], file=task["file"])
            else:
                submit(task)
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    task = pending.pop(ref)
                    result = ray.get(ref)
                    meta = shard_metadata(result["shard"])
                    reason = stale_reason(meta, game, model_name)
                    if reason is not None:
                        # A shard of another model or game is dropped, never written.
                        emit(self.out, "stale", task=task["task"], reason=reason)
                        if attempts[task["task"]] > req["max_retries"]:
                            raise DriverError("task %d: only stale shards" % task["task"])
                        submit(task)
                        continue
                    path = os.path.join(out_dir, task["file"])
                    kind = "shard" if write_once(path, result["shard"]) else "skipped"
                    n = positions_in(result["line"])
                    positions += n
                    emit(
                        self.out, kind, task=task["task"], file=task["file"],
                        games=int(meta.get("games", 0)), positions=n,
                    )  # fmt: skip
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
        emit(self.out, "done", positions=positions, seconds=time.time() - began)

    def serve(self, lines):
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                req = json.loads(line)
                op = req.get("op")
                if op == "connect":
                    self.connect(req)
                elif op == "selfplay":
                    self.selfplay(req)
                elif op == "quit":
                    return 0
                else:
                    raise DriverError("unknown request %r" % op)
            except Exception as e:
                emit(self.out, "error", message="%s: %s" % (type(e).__name__, e))
                return 1
        return 0


def play(engine, model, model_name, config_text, game, games, seed):
    """The Ray task: `model` arrives as bytes from the object store."""
    return run_engine(engine, model, model_name, config_text, game, games, seed)


def main():
    # The protocol owns the real stdout; anything else that prints (Ray included) goes to
    # stderr.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    code = Driver(out).serve(sys.stdin)
    sys.exit(code)


if __name__ == "__main__":
    main()
