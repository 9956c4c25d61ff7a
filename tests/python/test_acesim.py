"""The Python module (docs/python.md) against closed forms and the command line.

ctest runs each TestCase class on its own (tests/CMakeLists.txt) with
PYTHONPATH=<build>/python and ACESIM_BINARY set to the acesim executable;
run by hand:

    PYTHONPATH=build/python ACESIM_BINARY=build/acesim /usr/bin/python3 tests/python/test_acesim.py -v
"""

import csv
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest

import acesim

SOURCE_DIR = os.environ.get("ACESIM_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ACESIM = os.environ.get("ACESIM_BINARY", os.path.join(SOURCE_DIR, "build", "acesim"))

# docs/model.md, "Closed forms": a ring all-reduce of S bytes on n NPUs takes
# 2(n-1) steps, each of one link latency A plus S/n bytes at the link
# bandwidth B, with the ideal executor, one chunk and no endpoint delay.
N, B_GBPS, A_NS = 8, 100.0, 500.0
S = 64 * 1024 * 1024


def ring_platform(bandwidth_GBps=B_GBPS, latency_ns=A_NS):
    return {
        "topology": [{"kind": "ring", "npus": N, "bandwidth_GBps": bandwidth_GBps, "latency_ns": latency_ns}],
        "communication": {"executor": "ideal"},
        "collectives": {"chunks": 1, "endpoint_delay_ns": 0, "all-reduce": {"algorithm": "ring"}},
    }


def ring_allreduce_ns(size, bandwidth_GBps=B_GBPS, latency_ns=A_NS):
    return 2 * (N - 1) * (latency_ns + size / N / bandwidth_GBps)


RING_YAML = """\
topology:
  - kind: ring
    npus: 8
    bandwidth_GBps: 100
    latency_ns: 500
communication:
  executor: ideal
collectives:
  chunks: 1
  endpoint_delay_ns: 0
  all-reduce:
    algorithm: ring
"""


def cli(*args, cwd=None):
    """Runs the acesim executable: (exit status, stdout, stderr)."""
    p = subprocess.run([ACESIM, *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args, cwd=None):
    status, out, err = cli(*args, "--json", cwd=cwd)
    if status != 0:
        raise AssertionError(f"acesim {' '.join(args)} --json: exit {status}: {err}")
    return json.loads(out)


def cli_error(*args, cwd=None):
    """The message the command line prints after 'acesim: error: ', and its exit status."""
    status, _, err = cli(*args, cwd=cwd)
    prefix = "acesim: error: "
    line = err.strip().splitlines()[-1]
    if not line.startswith(prefix):
        raise AssertionError(f"acesim {' '.join(args)}: no error line in {err!r}")
    return line[len(prefix):], status


class WithTempDir(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="acesim-python-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)


class CollectiveTest(WithTempDir):
    def test_ring_allreduce_on_a_platform_dict_is_the_closed_form(self):
        r = acesim.collective(platform=ring_platform(), op="all-reduce", bytes="64MiB", library="acesim")
        self.assertIsInstance(r, dict)
        self.assertEqual(len(r["results"]), 1)
        row = r["results"][0]
        self.assertEqual(row["bytes"], S)
        self.assertEqual(row["ranks"], N)
        self.assertEqual(row["executor"], "ideal")
        self.assertAlmostEqual(row["time_ns"], ring_allreduce_ns(S), delta=ring_allreduce_ns(S) * 1e-9)
        # nccl-tests' bus bandwidth: 2(n-1)/n of S over the time.
        self.assertAlmostEqual(row["busbw_GBps"], 2 * (N - 1) / N * S / row["time_ns"], places=9)

    def test_a_sweep_of_sizes_is_the_closed_form_at_every_size(self):
        r = acesim.collective(platform=ring_platform(), min_bytes="1MiB", **{"max-bytes": "16MiB"}, step_factor=4)
        self.assertEqual([row["bytes"] for row in r["results"]], [1 << 20, 1 << 22, 1 << 24])
        for row in r["results"]:
            expected = ring_allreduce_ns(row["bytes"])
            self.assertAlmostEqual(row["time_ns"], expected, delta=expected * 1e-9)

    def test_doubling_the_bandwidth_halves_a_bandwidth_bound_time(self):
        no_latency = ring_platform(latency_ns=0)
        base = acesim.collective(platform=no_latency, bytes="256MiB")["results"][0]["time_ns"]
        # A dotted platform key ...
        dotted = acesim.collective(platform=no_latency, bytes="256MiB", **{"topology.0.bandwidth_GBps": 2 * B_GBPS})
        self.assertAlmostEqual(dotted["results"][0]["time_ns"], base / 2, delta=base * 1e-9)
        self.assertEqual(dotted["platform"], "inline platform with topology.0.bandwidth_GBps=200.0")
        # ... is the same as the platform dict saying so.
        doubled = acesim.collective(platform=ring_platform(bandwidth_GBps=2 * B_GBPS, latency_ns=0), bytes="256MiB")
        self.assertEqual(doubled["results"], dotted["results"])
        self.assertAlmostEqual(base, ring_allreduce_ns(256 << 20, latency_ns=0), delta=base * 1e-9)

    def test_hbm_bandwidth_key_changes_an_sm_collective(self):
        slow = acesim.collective(platform="hgx-h100", bytes="64MiB", **{"npu.hbm_GBps": 500})
        fast = acesim.collective(platform="hgx-h100", bytes="64MiB", **{"npu.hbm_GBps": 3350})
        self.assertGreater(slow["results"][0]["time_ns"], fast["results"][0]["time_ns"])

    def test_equals_the_command_lines_json(self):
        ring = self.write("ring.yaml", RING_YAML)
        cases = [
            ({"platform": ring, "bytes": "64MiB", "executor": "ace"}, ["--platform", ring, "--bytes", "64MiB", "--executor", "ace"]),
            ({"platform": "hgx-h100", "min_bytes": "1MiB", "max_bytes": "4MiB"},
             ["--platform", "hgx-h100", "--min-bytes", "1MiB", "--max-bytes", "4MiB"]),
            ({"platform": "hgx-h100", "nodes": 2, "bytes": "16MiB", "library": "nccl", "algo": "ring"},
             ["--platform", "hgx-h100", "--nodes", "2", "--bytes", "16MiB", "--library", "nccl", "--algo", "ring"]),
            ({"platform": ring, "bytes": "4MiB", "straggler": ["1=2", "3=1.5"], "full": True},
             ["--platform", ring, "--bytes", "4MiB", "--straggler", "1=2", "--straggler", "3=1.5", "--full"]),
            ({"op": "all-to-all", "bytes": "1MiB", "dims": [0, 2], "full": False, "chunks": None},
             ["--op", "all-to-all", "--bytes", "1MiB", "--dims", "0,2"]),
        ]
        for options, args in cases:
            with self.subTest(args=args):
                self.assertEqual(acesim.collective(**options), cli_json("collective", *args))

    def test_numpy_values_and_paths_are_accepted(self):
        import pathlib

        import numpy as np

        ring = pathlib.Path(self.write("ring.yaml", RING_YAML))
        r = acesim.collective(platform=ring, bytes=np.int64(S), **{"topology.0.latency_ns": np.float64(A_NS)})
        self.assertAlmostEqual(r["results"][0]["time_ns"], ring_allreduce_ns(S), delta=1e-3)
        self.assertEqual(acesim.collective(dims=np.array([0, 2]), bytes="1MiB"), acesim.collective(dims="0,2", bytes="1MiB"))

    def test_threads_get_the_same_results(self):
        # The GIL is released while simulating: threads run side by side.
        expected = acesim.collective(platform="hgx-h100", bytes="64MiB")
        got = [None] * 4

        def work(i):
            got[i] = acesim.collective(platform="hgx-h100", bytes="64MiB")

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(got))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(got, [expected] * len(got))


class RunAndCharacterizeTest(unittest.TestCase):
    def test_run_equals_the_command_lines_json(self):
        self.assertEqual(acesim.run(compare=["sm", "ace", "ideal"], iterations=1),
                         cli_json("run", "--compare", "sm,ace,ideal", "--iterations", "1"))
        self.assertEqual(acesim.run(model="llama3-8b", platform="hgx-h100", nodes=4, tp=8, pp=2, sequence_parallel=True),
                         cli_json("run", "--model", "llama3-8b", "--platform", "hgx-h100", "--nodes", "4", "--tp", "8",
                                  "--pp", "2", "--sequence-parallel"))
        # Uneven pipeline stages: Megatron-LM's flags as keyword arguments.
        uneven = acesim.run(model="llama3-8b", platform="hgx-h100", nodes=4, tp=8, pp=4, global_batch=8,
                            decoder_first_pipeline_num_layers=7, decoder_last_pipeline_num_layers=7)
        self.assertEqual(uneven, cli_json("run", "--model", "llama3-8b", "--platform", "hgx-h100", "--nodes", "4",
                                          "--tp", "8", "--pp", "4", "--global-batch", "8",
                                          "--decoder-first-pipeline-num-layers", "7",
                                          "--decoder-last-pipeline-num-layers", "7"))
        self.assertIn("layers per stage 7, 9 x2, 7", uneven["plan"])
        self.assertEqual(uneven["mfu"], uneven["hfu"])  # nothing recomputed

    def test_run_replays_a_pytorch_profiler_trace(self):
        trace = os.path.join(SOURCE_DIR, "tests", "data", "kineto", "a100x2_nccl2.17_allreduce.rank0.json.gz")
        r = acesim.run(kineto=trace, platform="hgx-a100", nodes=1, kineto_comm="measured")
        self.assertEqual(r, cli_json("run", "--kineto", trace, "--platform", "hgx-a100", "--nodes", "1",
                                     "--kineto-comm", "measured"))
        self.assertEqual(r["iteration_times_ns"], [222503285, 219786430, 224936243])
        self.assertEqual(r["collectives"]["measured"], 21)
        # Made 16 wide and spread over two nodes: the job and its layout in the JSON.
        wide = acesim.run(kineto=trace, platform="hgx-a100", nodes=2, dp=16, placement="spread")
        self.assertEqual(wide["job_ranks"], 16)
        self.assertTrue(wide["placement"].startswith("spread"))
        self.assertIn("--dp 16", wide["assumptions"][0])
        two = acesim.run(kineto=trace, platform="hgx-a100", nodes=1)
        self.assertGreater(wide["communication_ns"]["replayed"], 5 * two["communication_ns"]["replayed"])

    def test_run_compares_executors(self):
        r = acesim.run(compare=["sm", "ideal"])
        self.assertEqual([run["executor"] for run in r["runs"]], ["sm", "ideal"])

    def test_cluster_equals_the_command_lines_json(self):
        f = os.path.join(SOURCE_DIR, "tests", "data", "clusters", "shared-uplink.yaml")
        r = acesim.cluster(f)
        self.assertEqual(r, cli_json("cluster", f))
        self.assertEqual(r["jobs"][0]["slowdown"], 2.0)
        self.assertIsNone(acesim.cluster(f, no_alone=True)["jobs"][0]["slowdown"])
        with self.assertRaises(TypeError):
            acesim.cluster(3)

    def test_characterize_equals_the_command_lines_json(self):
        for study in ["units", "overlap"]:
            with self.subTest(study=study):
                self.assertEqual(acesim.characterize(study, bytes="16MiB"), cli_json("characterize", study, "--bytes", "16MiB"))


# A minimal Chakra execution-trace writer (src/chakra/et_def.proto): each
# file is the GlobalMetadata, then the nodes, each with a varint length.
def _varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v >= 0x80 else 0))
        v >>= 7
        if not v:
            return bytes(out)


def _int_field(number, value):
    return _varint(number << 3) + _varint(value)


def _bytes_field(number, data):
    data = data.encode() if isinstance(data, str) else data
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _attr(name, number, value):  # AttributeProto: name, then int32_val (7), int64_val (9) or bool_val (27)
    return _bytes_field(1, name) + _int_field(number, value)


def chakra_p2p(node_id, name, node_type, peer, data_deps=()):
    """A send (node_type 5) to or a receive (6) from rank `peer` of 64 bytes."""
    peer_key = "comm_dst" if node_type == 5 else "comm_src"
    node = _int_field(1, node_id) + _bytes_field(2, name) + _int_field(3, node_type)
    node += b"".join(_int_field(5, d) for d in data_deps)
    for attr in [_attr("is_cpu_op", 27, 0), _attr(peer_key, 7, peer), _attr("comm_size", 9, 64), _attr("comm_tag", 7, 0)]:
        node += _bytes_field(10, attr)
    return node


def write_chakra(prefix, ranks):
    for rank, nodes in enumerate(ranks):
        messages = [_bytes_field(1, "0.0.4")] + nodes
        with open(f"{prefix}.{rank}.et", "wb") as f:
            f.write(b"".join(_varint(len(m)) + m for m in messages))
    return prefix


class ErrorTest(WithTempDir):
    def assertSameError(self, call, *args, status=2, cwd=None):
        message, cli_status = cli_error(*args, cwd=cwd)
        self.assertEqual(cli_status, status)
        with self.assertRaises(ValueError) as caught:
            call()
        self.assertEqual(str(caught.exception), message)
        self.assertEqual(caught.exception.status, status)

    def test_a_bad_value_raises_the_command_lines_message(self):
        self.assertSameError(lambda: acesim.collective(bytes="64M"), "collective", "--bytes", "64M")
        self.assertSameError(lambda: acesim.collective(op="all-reduse"), "collective", "--op", "all-reduse")
        self.assertSameError(lambda: acesim.run(model="resnet51"), "run", "--model", "resnet51")
        self.assertSameError(lambda: acesim.characterize("nosuch"), "characterize", "nosuch")
        self.assertSameError(lambda: acesim.collective(platform="nosuch"), "collective", "--platform", "nosuch")

    def test_a_bad_platform_file_raises_the_command_lines_message(self):
        typo = self.write("typo.yaml", RING_YAML.replace("algorithm:", "algoritm:"))
        self.assertSameError(lambda: acesim.collective(platform=typo), "collective", "--platform", typo)

    def test_a_stuck_simulation_raises_the_command_lines_message(self):
        # Each rank receives before it sends: nobody sends (exit status 3).
        ranks = [[chakra_p2p(1, "wait", 6, peer), chakra_p2p(2, "reply", 5, peer, [1])] for peer in (1, 0)]
        prefix = write_chakra(self.path("deadlock"), ranks)
        pair = self.write("pair.yaml", "topology:\n  - {kind: ring, npus: 2, bandwidth_GBps: 50, latency_ns: 500}\n")
        self.assertSameError(lambda: acesim.run(platform=pair, chakra=prefix), "run", "--platform", pair, "--chakra", prefix,
                             status=3)

    def test_a_calibration_prices_a_run_in_situ_and_a_foreign_one_is_refused(self):
        hopper = self.write("hopper.yaml", "calibration: 1\nparameters:\n  - {arch: hopper, tensor: 1.1}\n")
        plan = dict(model="llama3-8b", tp=8, global_batch=8)
        run = acesim.run(platform="hgx-h100", calibration=hopper, **plan)
        self.assertEqual(run["calibration"]["file"], hopper)
        self.assertEqual(run["calibration"]["values"]["tensor"], 1.1)
        self.assertIsNone(acesim.run(platform="hgx-h100", **plan)["calibration"])
        shipped = acesim.run(platform="hgx-h100", calibration="published-runs", **plan)["calibration"]
        self.assertEqual(shipped["file"], "published-runs")
        self.assertGreater(shipped["values"]["tensor"], 1.0)
        self.assertSameError(lambda: acesim.run(platform="hgx-a100", calibration=hopper, **plan), "run", "--platform", "hgx-a100",
                             "--calibration", hopper, "--model", "llama3-8b", "--tp", "8", "--global-batch", "8")

    def test_a_bad_platform_dict_names_the_key(self):
        with self.assertRaises(ValueError) as caught:
            acesim.collective(platform={"topologi": []})
        self.assertEqual(str(caught.exception), "inline platform:1: topologi: unknown key (did you mean 'topology'?)")

    def test_an_unknown_option_names_the_closest(self):
        with self.assertRaises(ValueError) as caught:
            acesim.collective(byte="64MiB")
        self.assertEqual(str(caught.exception),
                         "acesim.collective: options.byte: 'collective' has no option 'byte' (did you mean 'bytes'?)")
        self.assertEqual(caught.exception.status, 2)
        with self.assertRaises(ValueError) as caught:
            acesim.collective(json=True)
        self.assertIn("--json is set by the caller", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            acesim.collective(full="maybe")
        self.assertIn("--full is a flag: true or false", str(caught.exception))

    def test_an_unknown_platform_key_is_refused(self):
        with self.assertRaises(ValueError) as caught:
            acesim.collective(**{"npu.hbm_GBs": 4000})
        self.assertIn("hbm_GBps", str(caught.exception))

    def test_a_value_json_cannot_carry_is_refused(self):
        with self.assertRaises(TypeError):
            acesim.collective(bytes=object())
        with self.assertRaises(ValueError):
            acesim.collective(**{"npu.hbm_GBps": float("nan")})


class WriteFailureTest(WithTempDir):
    """Issue 42 F15: each way a call can fail raises the exception
    docs/python.md promises: ValueError for bad input and stuck runs,
    OSError for a file that cannot be written (status 2: the path cannot be
    used; 1: writing failed), RuntimeError for internal errors; each with
    the command line's message and exit status."""

    def assertSameOSError(self, call, *args, status):
        message, cli_status = cli_error(*args)
        self.assertEqual(cli_status, status, message)
        with self.assertRaises(OSError) as caught:
            call()
        self.assertEqual(str(caught.exception), message)
        self.assertEqual(caught.exception.status, status)
        self.assertIsNone(caught.exception.errno)
        return message

    def test_trace_and_csv_paths_that_cannot_be_written_raise_oserror(self):
        ring = self.write("ring.yaml", RING_YAML)
        base = ["run", "--platform", ring, "--iterations", "1"]
        run = lambda **kw: acesim.run(platform=ring, iterations=1, **kw)
        if os.path.exists("/dev/full"):
            # A full disk: the file opens, writing fails (raised RuntimeError).
            m = self.assertSameOSError(lambda: run(trace="/dev/full"), *base, "--trace", "/dev/full", status=1)
            self.assertEqual(m, "--trace: /dev/full: cannot write: No space left on device")
            # /dev/full is no directory to write CSV files in (raised ValueError).
            self.assertSameOSError(lambda: run(csv="/dev/full"), *base, "--csv", "/dev/full", status=2)
        # A directory where the trace file would be.
        m = self.assertSameOSError(lambda: run(trace=self.dir), *base, "--trace", self.dir, status=2)
        self.assertEqual(m, f"--trace: {self.dir} is a directory; give a file name")
        # A file where the CSV directory would be made.
        blocker = self.write("blocker", "")
        csv_dir = os.path.join(blocker, "csv")
        self.assertSameOSError(lambda: run(csv=csv_dir), *base, "--csv", csv_dir, status=2)
        # The cluster command's trace.
        cluster = os.path.join(SOURCE_DIR, "tests", "data", "clusters", "shared-uplink.yaml")
        self.assertSameOSError(lambda: acesim.cluster(cluster, trace=self.dir), "cluster", cluster, "--trace", self.dir,
                               status=2)
        # Bad input stays ValueError.
        with self.assertRaises(ValueError) as caught:
            run(trace="")
        self.assertEqual(caught.exception.status, 2)

    def test_a_sweep_directory_that_cannot_be_locked_raises_oserror(self):
        # sweep.lock as a directory: the lock file cannot be opened (raised
        # ValueError, as for a sweep holding the directory).
        os.makedirs(self.path(os.path.join("out", "sweep.lock")))
        self.write("ring.yaml", RING_YAML)
        grid = {"command": "collective", "options": {"platform": self.path("ring.yaml")}, "grid": {"bytes": ["1MiB"]}}
        with self.assertRaises(OSError) as caught:
            acesim.sweep(grid, out=self.path("out"))
        self.assertEqual(caught.exception.status, 2)
        self.assertEqual(str(caught.exception),
                         f"--out: {self.path('out')}/sweep.lock: cannot open for writing: Is a directory")

    def test_each_kind_of_failure_maps_to_its_exception(self):
        # The one mapping every call goes through (an internal error cannot
        # be caused from outside on purpose).
        for status, internal, output, kind in [(2, False, False, ValueError), (3, False, False, ValueError),
                                               (2, False, True, OSError), (1, False, True, OSError),
                                               (1, True, False, RuntimeError)]:
            with self.subTest(status=status, internal=internal, output=output):
                with self.assertRaises(kind) as caught:
                    acesim._acesim._raise_cli_error(status, "m", internal, output)
                self.assertIs(type(caught.exception), kind)
                self.assertEqual(str(caught.exception), "m")
                self.assertEqual(caught.exception.status, status)


def nested(levels, leaf=1):
    """`levels` dicts, each the only value of the one above: nested(2) is {"a": {"a": 1}}."""
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


class HostileInputTest(unittest.TestCase):
    """Whatever a caller passes, the interpreter survives: a wrong Python
    type raises TypeError, a bad value ValueError, naming the key path."""

    def assertRaisesWith(self, exception, fragment, call, *args, **kwargs):
        with self.assertRaises(exception) as caught:
            call(*args, **kwargs)
        self.assertIn(fragment, str(caught.exception))
        return caught.exception

    def test_nesting_60000_deep_is_refused_not_a_crash(self):
        # Each of these ended Python with SIGSEGV (the JSON text) or raised
        # RecursionError (the dict).
        deep = nested(60000)
        deep_json = '{"a":' * 60000 + "1" + "}" * 60000
        where = "acesim.collective: options.platform" + ".a" * 63 + ": nested more than 64 levels of lists and maps deep"
        self.assertRaisesWith(ValueError, where, acesim.collective, platform=deep)
        self.assertRaisesWith(ValueError, "acesim.flatten_metrics: report.a.a.a", acesim.flatten_metrics, deep)
        self.assertRaisesWith(ValueError, "acesim.sweep: grid.options.platform.a.a", acesim.sweep,
                              {"command": "collective", "options": {"platform": deep}})
        deep_list = []
        for _ in range(60000):
            deep_list = [deep_list]
        self.assertRaisesWith(ValueError, "acesim.run: options.dims.0.0.0", acesim.run, dims=deep_list)
        # The native half checks the JSON it reads, whoever calls it.
        e = self.assertRaisesWith(ValueError, "s: options.platform" + ".a" * 63 + ": nested more than 64 levels",
                                  acesim._acesim.run_once, "collective", '{"platform":' + deep_json + "}", "s")
        self.assertEqual(e.status, 2)
        self.assertRaisesWith(ValueError, "s: options" + ".a" * 64 + ": nested more than 64", acesim._acesim.run_once,
                              "collective", deep_json, "s")
        self.assertRaisesWith(ValueError, "report" + ".a" * 64 + ": nested", acesim._acesim.flatten_metrics, deep_json, "[]")
        self.assertRaisesWith(ValueError, "axes.0.0.0", acesim._acesim.flatten_metrics, "{}", "[" * 60000 + "]" * 60000)

    def test_the_depth_limit_is_64_levels(self):
        self.assertEqual(acesim._acesim.MAX_DEPTH, 64)
        self.assertEqual(acesim.flatten_metrics(nested(64)), {"a" + ".a" * 63: 1})
        self.assertRaisesWith(ValueError, "acesim.flatten_metrics: report" + ".a" * 64 + ": nested more than 64 levels",
                              acesim.flatten_metrics, nested(65))
        self.assertEqual(json.loads(acesim._acesim.flatten_metrics(json.dumps(nested(64)), "[]")), [["a" + ".a" * 63, 1]])
        self.assertRaisesWith(ValueError, "report" + ".a" * 64 + ": nested more than 64 levels",
                              acesim._acesim.flatten_metrics, json.dumps(nested(65)), "[]")

    def test_a_list_or_dict_inside_itself_is_refused(self):
        loop = {"topology": []}
        loop["topology"].append(loop)
        self.assertRaisesWith(ValueError, "acesim.collective: options.platform.topology.0: holds itself",
                              acesim.collective, platform=loop)
        ring = []
        ring.append(ring)
        self.assertRaisesWith(ValueError, "acesim.flatten_metrics: report.a.0: holds itself", acesim.flatten_metrics,
                              {"a": ring})

    def test_whole_numbers_beyond_int64_are_refused_as_such(self):
        # bytes=2**70 said "unknown unit 'e+21'": it reached the command line
        # as 1.1805916207174113e+21.
        e = self.assertRaisesWith(ValueError, "", acesim.collective, bytes=2**70)
        self.assertEqual(str(e), "acesim.collective: options.bytes: 1180591620717411303424 is too large: "
                                 "at most 9223372036854775807")
        self.assertEqual(e.status, 2)
        self.assertRaisesWith(ValueError, "options.bytes: 9223372036854775808 is too large: at most 9223372036854775807",
                              acesim.collective, bytes=2**63)
        self.assertRaisesWith(ValueError, "options.npu.hbm_GBps: -1180591620717411303424 is too small: "
                              "at least -9223372036854775808", acesim.collective, **{"npu.hbm_GBps": -2**70})
        self.assertRaisesWith(ValueError, "options.platform.npu.hbm_GBps: 1180591620717411303424 is too large",
                              acesim.collective, platform={"npu": {"hbm_GBps": 2**70}})
        self.assertRaisesWith(ValueError, "s: options.bytes: 1180591620717411303424 is too large", acesim._acesim.run_once,
                              "collective", '{"bytes": 1180591620717411303424}', "s")
        # The largest int64 is a number like any other.
        self.assertRaisesWith(ValueError, "--bytes: '9223372036854775807'", acesim.collective, bytes=2**63 - 1)

    def test_wrong_types_raise_type_error(self):
        # platform=5 said "... or a map (the platform YAML itself), not a list".
        self.assertRaisesWith(TypeError, "acesim.collective: options.platform: a platform file, a preset's name or a dict "
                              "(the platform YAML), not an int (5)", acesim.collective, platform=5)
        self.assertRaisesWith(TypeError, "options.platform: a platform file", acesim.run, platform=["hgx-h100"])
        self.assertRaisesWith(TypeError, "acesim.collective: options.bytes: a number, string or bool, or a list of them, "
                              "not a dict", acesim.collective, bytes={"size": 1})
        self.assertRaisesWith(TypeError, "options.dims: a number, string or bool, or a list of them, not a list holding",
                              acesim.collective, dims=[0, [1]])
        # A dict key JSON would have turned into text.
        self.assertRaisesWith(TypeError, "acesim.collective: options.platform.topology.0: a key must be a string, not an "
                              "int (1)", acesim.collective, platform={"topology": [{1: "ring"}]})
        self.assertRaisesWith(TypeError, "options.bytes: cannot pass a bytes (b'64MiB')", acesim.collective, bytes=b"64MiB")
        self.assertRaisesWith(TypeError, "acesim.characterize: study: a study's name (a string), not an int (5)",
                              acesim.characterize, 5)
        self.assertRaisesWith(TypeError, "acesim.sweep: grid: a grid file's path or a dict, not an int (5)", acesim.sweep, 5)
        self.assertRaisesWith(TypeError, "acesim.sweep: jobs: an integer in 1..1024, not a str ('2')", acesim.sweep,
                              "grid.yaml", jobs="2")
        self.assertRaisesWith(TypeError, "acesim.sweep: shard: a string I/N (e.g. '0/4'), not an int (1)", acesim.sweep,
                              "grid.yaml", shard=1)
        self.assertRaisesWith(TypeError, "acesim.sweep: out: a path (str or os.PathLike), not an int (3)", acesim.sweep,
                              "grid.yaml", out=3)
        self.assertRaisesWith(TypeError, "acesim.sweep: grid.grid: a key must be a string", acesim.sweep,
                              {"command": "collective", "grid": {1: [1]}})
        # flatten_metrics(None) returned {'': None}.
        self.assertRaisesWith(TypeError, "acesim.flatten_metrics: report: a --json report (a dict), not None",
                              acesim.flatten_metrics, None)
        self.assertRaisesWith(TypeError, "acesim.flatten_metrics: axes: a list, not a str ('bytes')",
                              acesim.flatten_metrics, {"bytes": 1}, axes="bytes")
        self.assertRaisesWith(TypeError, "acesim.flatten_metrics: axes: a list of names (strings), not [1]",
                              acesim.flatten_metrics, {"bytes": 1}, axes=[1])
        # rows([None]) raised AttributeError.
        self.assertRaisesWith(TypeError, "acesim.rows: records.1: a record of acesim.sweep", acesim.rows,
                              [{"point": 0, "params": {}}, None])
        self.assertRaisesWith(TypeError, "acesim.rows: records: a list, not None", acesim.rows, None)

    def test_bad_values_raise_value_error(self):
        self.assertRaisesWith(ValueError, "acesim.collective: options.npu.hbm_GBps: nan is not a finite number",
                              acesim.collective, **{"npu.hbm_GBps": float("nan")})
        self.assertRaisesWith(ValueError, "acesim.sweep: grid.grid.bytes.1: inf is not a finite number", acesim.sweep,
                              {"command": "collective", "grid": {"bytes": ["1MiB", float("inf")]}})
        # A lone surrogate reached the native half as JSON it could not read
        # (RuntimeError).
        self.assertRaisesWith(ValueError, "acesim.collective: options.platform.topology: not valid Unicode text",
                              acesim.collective, platform={"topology": "\ud800"})
        self.assertRaisesWith(ValueError, "acesim.collective: options.platform: text holding a NUL character",
                              acesim.collective, platform="hgx-h100\0")
        self.assertRaisesWith(ValueError, "acesim.sweep: jobs: must be an integer in 1..1024, got 2000", acesim.sweep,
                              "grid.yaml", jobs=2000)

    def test_the_native_half_refuses_bad_json_with_value_error(self):
        # Each raised RuntimeError (an internal error) or returned nonsense.
        e = self.assertRaisesWith(ValueError, "s: options: not JSON (", acesim._acesim.run_once, "collective", "{", "s")
        self.assertEqual(e.status, 2)
        self.assertRaisesWith(ValueError, "report: not JSON (", acesim._acesim.flatten_metrics, "nan", "[]")
        self.assertRaisesWith(ValueError, "report: a --json report (a map), not number", acesim._acesim.flatten_metrics,
                              "5", "[]")
        self.assertRaisesWith(ValueError, 'axes: a list of names (strings), not ["a",1]', acesim._acesim.flatten_metrics,
                              "{}", '["a", 1]')
        self.assertRaisesWith(ValueError, "axes: a list of names (strings), not {}", acesim._acesim.flatten_metrics,
                              "{}", "{}")
        self.assertRaisesWith(ValueError, "s: options: not JSON ([json.exception.out_of_range.406] number overflow parsing "
                              "'1e999')", acesim._acesim.run_once, "collective", '{"bytes": 1e999}', "s")

    def test_a_50_mb_value_is_quoted_by_its_first_80_characters(self):
        # Issue 42 F13: each echoed the whole value into its message.
        huge = "x" * (50 << 20)
        head = "x" * 80 + "..."
        e = self.assertRaisesWith(ValueError, "", acesim.run, model=huge)
        self.assertTrue(str(e).startswith(f"unknown model '{head}' (valid: "), str(e)[:200])
        self.assertLess(len(str(e)), 1000)
        e = self.assertRaisesWith(ValueError, "", acesim.collective, **{huge: 1})
        self.assertTrue(str(e).startswith(f"acesim.collective: options.{head}: 'collective' has no option '{head}' (valid: "),
                        str(e)[:300])
        self.assertLess(len(str(e)), 2000)
        # The native half's own key paths.
        e = self.assertRaisesWith(ValueError, f"s: options.{head}: 1180591620717411303424 is too large",
                                  acesim._acesim.run_once, "collective", json.dumps({huge: 2**70}), "s")
        self.assertLess(len(str(e)), 1000)
        # A platform key that long is no key (the YAML reader took a minute).
        e = self.assertRaisesWith(ValueError, "", acesim.collective, **{"npu." + huge: 1})
        self.assertEqual(str(e), f"acesim.collective: options.npu.{'x' * 76}...: not a platform key ({len(huge) + 4} bytes long)")

    def test_a_long_value_anywhere_is_cut_in_the_message(self):
        # The same for values of every kind, 2 MB each (the YAML reader takes
        # seconds over 50 MB); a path is cut where it passes 1 KiB.
        huge = "x" * (2 << 20)
        cut = "x" * 70 + "..."  # what is left of the value, wherever it begins
        for call, kwargs, echoed in [
                (acesim.collective, {"platform": huge}, True), (acesim.collective, {"platform": "/tmp/" + huge}, True),
                (acesim.collective, {"bytes": huge}, True), (acesim.collective, {"platform": {huge: 1}}, False),
                (acesim.run, {"platform": "hgx-h100", "model": "llama3-8b", "kernel_times": huge}, True),
                (acesim.cluster, {"file": huge}, True), (acesim.sweep, {"grid": huge}, True),
                (acesim.sweep, {"grid": {"command": "collective", "grid": {huge: [1]}}}, False),
                (acesim.sweep, {"grid": {"command": huge}}, True),
                (acesim.sweep, {"grid": {"command": "collective"}, "shard": huge}, True)]:
            with self.subTest(call=call.__name__, kwargs=[k[:20] for k in kwargs]):
                e = self.assertRaisesWith((ValueError, OSError), "", call, **kwargs)
                self.assertLess(len(str(e)), 1000, str(e)[:300])
                if echoed:  # (a key of 1 KiB or more is malformed YAML, before any message could name it)
                    self.assertIn(cut, str(e))
        # A point's error record too.
        [record] = acesim.sweep({"command": "collective", "grid": {"bytes": [huge]}})
        self.assertTrue(record["error"].startswith(f"--bytes: '{'x' * 80}...'"), record["error"][:200])
        self.assertLess(len(record["error"]), 1000)
        # A key in a key path, in TypeError's message too.
        e = self.assertRaisesWith(TypeError, f"acesim.collective: options.platform.{'x' * 80}...: a key must be a string",
                                  acesim.collective, platform={huge: {1: 2}})
        self.assertLess(len(str(e)), 1000)

    def test_the_command_line_quotes_a_long_value_the_same_way(self):
        # An argument is at most 128 KiB on Linux.
        long = "y" * 100000
        message, status = cli_error("run", "--model", long)
        self.assertEqual(status, 2)
        with self.assertRaises(ValueError) as caught:
            acesim.run(model=long)
        self.assertEqual(str(caught.exception), message)
        self.assertTrue(message.startswith("unknown model '" + "y" * 80 + "...' (valid: "), message[:200])

    def test_valid_values_of_every_kind_still_pass(self):
        expected = acesim.collective(dims="0,2", bytes="1MiB")
        self.assertEqual(acesim.collective(dims=(0, 2), bytes="1MiB"), expected)
        self.assertEqual(acesim.collective(dims={2, 0}, bytes="1MiB"), expected)
        self.assertEqual(acesim.collective(dims=[0, 2], bytes=1 << 20, chunks=None, full=False), expected)


GRID = {
    "command": "collective",
    "options": {"platform": "ring.yaml"},
    "grid": {"executor": ["ideal", "ace"], "bytes": ["1MiB", "64MiB", "64M"]},
}
GRID_YAML = """\
command: collective
options:
  platform: ring.yaml
grid:
  executor: [ideal, ace]
  bytes: [1MiB, 64MiB, 64M]
"""
BAD_VALUE = "--bytes: '64M': unit 'M' is ambiguous; write MiB (1024-based) or MB (1000-based)"


class SweepTest(WithTempDir):
    def setUp(self):
        super().setUp()
        self.write("ring.yaml", RING_YAML)
        self.cwd = os.getcwd()
        os.chdir(self.dir)  # the grid names ring.yaml relative to here
        self.addCleanup(os.chdir, self.cwd)

    def test_a_dict_grid_returns_every_point_with_errors_as_records(self):
        records = acesim.sweep(GRID, jobs=2)
        self.assertEqual([r["point"] for r in records], list(range(6)))
        self.assertEqual([r["params"] for r in records],
                         [{"executor": e, "bytes": b} for e in ["ideal", "ace"] for b in ["1MiB", "64MiB", "64M"]])
        for r in records:
            if r["params"]["bytes"] == "64M":
                self.assertEqual(set(r), {"point", "params", "error", "status"})
                self.assertEqual(r["error"], BAD_VALUE)
                self.assertEqual(r["status"], 2)
            else:
                self.assertEqual(set(r), {"point", "params", "result"})
        ideal_64 = records[1]["result"]["results"][0]
        self.assertAlmostEqual(ideal_64["time_ns"], ring_allreduce_ns(S), delta=1e-3)
        # Each point is what the same call gives.
        self.assertEqual(records[4]["result"], acesim.collective(platform="ring.yaml", executor="ace", bytes="64MiB"))

    def test_out_writes_the_command_lines_files(self):
        self.write("grid.yaml", GRID_YAML)
        status, out, err = cli("sweep", "grid.yaml", "--out", "cli", cwd=self.dir)
        self.assertEqual(status, 0, err)
        acesim.sweep(GRID, out="from-dict")
        acesim.sweep("grid.yaml", out=os.path.join(self.dir, "from-file"))
        with open(os.path.join("cli", "results.csv")) as f:
            expected = f.read()
        for d in ["from-dict", "from-file"]:
            with self.subTest(dir=d):
                self.assertEqual(sorted(os.listdir(d)), ["results.csv", "results.jsonl", "sweep.json"])
                with open(os.path.join(d, "results.csv")) as f:
                    self.assertEqual(f.read(), expected)

    def test_shards_and_resuming(self):
        first = acesim.sweep(GRID, out="dir", shard="0/2")
        self.assertEqual([r["point"] for r in first], [0, 2, 4])
        with open(os.path.join("dir", "sweep.json")) as f:
            self.assertEqual(json.load(f)["shard"], "0/2")
        self.assertEqual([r["point"] for r in acesim.sweep(GRID, shard="1/2")], [1, 3, 5])
        # The same sweep into the same directory runs nothing again and
        # returns every record; another grid's directory is refused.
        with open("dir/results.jsonl") as f:
            kept = f.read()
        self.assertEqual(acesim.sweep(GRID, out="dir", shard="0/2"), first)
        with open("dir/results.jsonl") as f:
            self.assertEqual(f.read(), kept)
        with self.assertRaises(ValueError):
            acesim.sweep(GRID, out="dir")
        # A file the points read that changed is not mixed in.
        os.remove("ring.yaml")
        with self.assertRaises(ValueError) as caught:
            acesim.sweep(GRID, out="dir", shard="0/2")
        self.assertIn("was run with other input files (platform: ring.yaml changed)", str(caught.exception))

    def test_a_directory_another_thread_sweeps_into_is_refused(self):
        import fcntl

        acesim.sweep(GRID, out="dir")
        # Another thread of this process holds it: flock(2) on its own open file.
        with open(os.path.join("dir", "sweep.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            lock.write(f"pid {os.getpid()} on here, started now\n")
            lock.flush()
            with self.assertRaises(ValueError) as caught:
                acesim.sweep(GRID, out="dir")
            self.assertEqual(
                str(caught.exception),
                f"--out: dir is in use by another sweep (pid {os.getpid()} on here, started now); "
                "wait for it to end, or give another --out",
            )
        # Threads at once: each sweep is the whole grid's, or refused.
        outcomes = []

        def work():
            try:
                outcomes.append(len(acesim.sweep(GRID, out="both", jobs=1)))
            except ValueError as e:
                outcomes.append(str(e))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for o in outcomes:
            self.assertTrue(o == 6 or "is in use by another sweep" in o, o)
        self.assertIn(6, outcomes)
        with open(os.path.join("both", "results.csv")) as f:
            self.assertEqual(len(f.read().splitlines()), 7)
        self.assertFalse(os.path.exists(os.path.join("both", "sweep.lock")))

    @unittest.skipUnless(os.path.exists("/dev/full"), "no /dev/full")
    def test_a_file_that_cannot_be_written_raises_oserror(self):
        # The sweep writes through names of its own and follows no link
        # planted in its directory: a file-size limit of 0 stands for a full
        # disk (every write fails with EFBIG; SIGXFSZ ignored meanwhile).
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
        try:
            with self.assertRaises(OSError) as caught:
                acesim.sweep(GRID, out="full")
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
            signal.signal(signal.SIGXFSZ, old)
        self.assertEqual(caught.exception.status, 1)
        self.assertRegex(str(caught.exception), r"^--out: full/sweep\.json\.\d+\.\d+\.tmp: cannot write: File too large$")
        self.write("file", "")
        with self.assertRaises(OSError) as caught:
            acesim.sweep(GRID, out="file")
        self.assertEqual(caught.exception.status, 2)
        self.assertIn("--out: file: cannot create the directory", str(caught.exception))

    def test_a_bad_grid_raises_before_any_point_runs(self):
        bad = self.write("bad.yaml", GRID_YAML.replace("bytes:", "byte:"))
        message, status = cli_error("sweep", bad, "--out", "cli")
        self.assertEqual(status, 2)
        with self.assertRaises(ValueError) as caught:
            acesim.sweep(bad, out="py")
        self.assertEqual(str(caught.exception), message)
        self.assertFalse(os.path.exists("py"))
        with self.assertRaises(ValueError) as caught:
            acesim.sweep({"command": "collective", "grid": {"bytes": []}})
        self.assertIn("empty axis", str(caught.exception))
        with self.assertRaises(ValueError):
            acesim.sweep(GRID, jobs=0)
        with self.assertRaises(ValueError) as caught:
            acesim.sweep(GRID, shard="2/2")
        self.assertIn("I must be below N", str(caught.exception))

    def test_rows_are_results_csv(self):
        self.write("grid.yaml", GRID_YAML)
        records = acesim.sweep("grid.yaml", out="dir")
        table = acesim.rows(records)
        with open(os.path.join("dir", "results.csv"), newline="") as f:
            csv_rows = list(csv.DictReader(f))
        self.assertEqual(len(table), len(csv_rows))
        for row, csv_row in zip(table, csv_rows):
            # Every column of a row that ran; an error row has no metrics.
            if row["error"] is None:
                self.assertEqual(list(row), list(csv_row))
            for name, value in row.items():
                text = csv_row[name]
                if value is None:
                    self.assertEqual(text, "")
                elif isinstance(value, bool):
                    self.assertEqual(text, "true" if value else "false")
                elif isinstance(value, (int, float)):
                    self.assertEqual(float(text), value, name)
                else:
                    self.assertEqual(text, value, name)
        self.assertEqual(table[1]["executor"], "ideal")
        self.assertEqual(table[1]["bytes"], "64MiB")
        self.assertEqual(table[1]["result.bytes"], S)  # a metric named like an axis
        self.assertEqual(table[2]["error"], BAD_VALUE)

    def test_rows_make_numeric_parameters_numbers(self):
        grid = {"command": "collective", "options": {"platform": ring_platform(latency_ns=0), "bytes": "64MiB"},
                "grid": {"topology.0.bandwidth_GBps": [100, 200, 400]}}
        table = acesim.rows(acesim.sweep(grid))
        self.assertEqual([row["topology.0.bandwidth_GBps"] for row in table], [100, 200, 400])
        times = [row["time_ns"] for row in table]
        self.assertAlmostEqual(times[0] / times[1], 2.0, places=9)
        self.assertAlmostEqual(times[0] / times[2], 4.0, places=9)

    def test_flatten_metrics(self):
        r = acesim.collective(platform=ring_platform(), min_bytes="1MiB", max_bytes="2MiB")
        flat = acesim.flatten_metrics(r)
        self.assertEqual(flat["results.0.bytes"], 1 << 20)
        self.assertEqual(flat["results.1.bytes"], 2 << 20)
        self.assertEqual(acesim.flatten_metrics(r, axes=["backend"])["result.backend"], "fluid")


class ExampleTest(WithTempDir):
    def test_sweep_plot_writes_a_png(self):
        png = self.path("busbw.png")
        env = dict(os.environ, MPLBACKEND="Agg")
        script = os.path.join(SOURCE_DIR, "examples", "python", "sweep_plot.py")
        p = subprocess.run([sys.executable, script, "--out", png], env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(png), 10000)
        # docs/python.md shows the script's output: the same table.
        with open(os.path.join(SOURCE_DIR, "docs", "python.md")) as f:
            doc = f.read()
        command = "$ PYTHONPATH=build/python /usr/bin/python3 examples/python/sweep_plot.py --out busbw.png\n"
        self.assertIn(command, doc)
        shown = doc.split(command, 1)[1].split("```", 1)[0].splitlines()
        printed = p.stdout.splitlines()
        self.assertEqual(shown[:-1], printed[:-1])
        self.assertEqual(shown[-1], "wrote busbw.png")
        self.assertEqual(printed[-1], f"wrote {png}")


class VersionTest(unittest.TestCase):
    def test_version(self):
        self.assertEqual(acesim.__version__, os.environ.get("ACESIM_VERSION", acesim.__version__))
        self.assertRegex(acesim.__version__, r"^[0-9]+\.[0-9]+\.[0-9]+$")


if __name__ == "__main__":
    unittest.main()
