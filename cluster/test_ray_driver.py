"""Tests of the driver's parts that need no cluster: `python3 -m unittest discover cluster`.
The driver on a real two-node cluster is tested by engine/cli/tests/cluster_ray.rs."""

import io
import json
import os
import stat
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ray_driver as d  # noqa: E402


def fake_shard(**meta):
    header = json.dumps({"__metadata__": meta}).encode()
    return struct.pack("<Q", len(header)) + header


class Parts(unittest.TestCase):
    def test_metadata_is_read_and_bad_bytes_are_refused(self):
        data = fake_shard(game="liuzhou", model="runs/x/models/0003.onnx", games="2")
        self.assertEqual(d.shard_metadata(data)["model"], "runs/x/models/0003.onnx")
        for bad in [b"", b"\x05\x00", struct.pack("<Q", 99) + b"{}", struct.pack("<Q", 2) + b"{x"]:
            with self.assertRaises(d.DriverError):
                d.shard_metadata(bad)

    def test_a_shard_of_another_model_or_game_is_stale(self):
        meta = {"game": "liuzhou", "model": "m/0003.onnx"}
        self.assertIsNone(d.stale_reason(meta, "liuzhou", "m/0003.onnx"))
        self.assertIn("0002", d.stale_reason(meta, "liuzhou", "m/0002.onnx"))
        self.assertIn("go", d.stale_reason(meta, "go", "m/0003.onnx"))

    def test_a_shard_is_written_once_and_no_temporary_file_stays(self):
        with tempfile.TemporaryDirectory() as dir:
            path = os.path.join(dir, "0001-i0000-t0000.safetensors")
            self.assertTrue(d.write_once(path, b"first"))
            self.assertFalse(d.write_once(path, b"second"))
            with open(path, "rb") as f:
                self.assertEqual(f.read(), b"first")
            self.assertEqual(os.listdir(dir), [os.path.basename(path)])

    def test_positions_come_from_the_closing_line(self):
        self.assertEqual(d.positions_in("2 games, 153 positions (80.1/s), 30 samples"), 153)
        self.assertEqual(d.positions_in("nothing"), 0)

    def test_a_task_runs_the_engine_and_returns_its_one_shard(self):
        with tempfile.TemporaryDirectory() as dir:
            engine = os.path.join(dir, "engine")
            # A stand-in engine: checks its model arrived, writes one shard into --out.
            with open(engine, "w") as f:
                f.write(
                    "#!/bin/sh\n"
                    'while [ $# -gt 0 ]; do case "$1" in --out) out=$2;; --model) m=$2;; esac; shift; done\n'
                    'test "$(cat $m)" = MODEL || exit 3\n'
                    'mkdir -p "$out" && printf SHARD > "$out/1-selfplay-0000.safetensors"\n'
                    "echo '1 games, 42 positions (1.0/s)'\n"
                )
            os.chmod(engine, os.stat(engine).st_mode | stat.S_IEXEC)
            result = d.run_engine(engine, b"MODEL", "m.onnx", "selfplay: {}\n", "liuzhou", 1, 7)
            self.assertEqual(result["shard"], b"SHARD")
            self.assertEqual(d.positions_in(result["line"]), 42)
            with self.assertRaises(d.DriverError):
                d.run_engine(engine, b"OTHER", "m.onnx", "", "liuzhou", 1, 7)


class Protocol(unittest.TestCase):
    def serve(self, *requests):
        out = io.StringIO()
        code = d.Driver(out).serve(json.dumps(r) + "\n" for r in requests)
        return code, [json.loads(line) for line in out.getvalue().splitlines()]

    def test_an_unknown_request_or_a_batch_before_connect_is_an_error_event(self):
        for request in [{"op": "dance"}, {"op": "selfplay"}]:
            code, events = self.serve(request)
            self.assertEqual(code, 1)
            self.assertEqual(events[-1]["event"], "error")

    def test_a_python_without_ray_says_how_to_install_it(self):
        saved = sys.modules.get("ray")
        sys.modules["ray"] = None  # makes `import ray` fail as where it is not installed
        try:
            code, events = self.serve({"op": "connect", "address": "x", "engine": "e"})
        finally:
            if saved is None:
                del sys.modules["ray"]
            else:
                sys.modules["ray"] = saved
        self.assertEqual(code, 1)
        self.assertIn("pip install -r cluster/requirements.txt", events[-1]["message"])

    def test_quit_and_the_end_of_input_end_the_driver_quietly(self):
        self.assertEqual(self.serve({"op": "quit"}), (0, []))
        self.assertEqual(self.serve(), (0, []))

    def test_a_line_that_is_not_json_is_an_error_event(self):
        out = io.StringIO()
        self.assertEqual(d.Driver(out).serve(["{not json\n"]), 1)
        self.assertEqual(json.loads(out.getvalue())["event"], "error")


if __name__ == "__main__":
    unittest.main()
