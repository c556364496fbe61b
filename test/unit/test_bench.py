"""python -m kitsune.bench: the CPU path (--dry-run), the JSON / table / plot outputs; GPU runs marked gpu."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = ("workload", "mode", "correct", "kitsune_ms", "inductor_graph_ms", "device", "date", "torch", "triton")


def _run(*args, timeout=900, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "kitsune.bench", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=e)


def test_dry_run_one_workload(tmp_path):
    out = tmp_path / "r.json"
    p = _run("--dry-run", "--workloads", "nerf_65k", "--modes", "dataflow", "--json", str(out), "--backend",
             "--plot", str(tmp_path / "r.png"), env={"TRITON_INTERPRET": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    recs = json.loads(out.read_text())
    assert len(recs) == 1
    r = recs[0]
    for k in REQUIRED:
        assert k in r, k
    assert r["workload"] == "nerf_65k" and r["mode"] == "dataflow" and r["correct"] is True
    assert r["rel_err"] < 1e-4 and r["kitsune_ms"] is None  # no timing on the CPU
    assert r["floor_ms"] > 0 and r["floor_bytes"] > 0
    assert r["backend_correct"] is True and r["backend_graphs"] == ["kitsune"]
    assert "nerf_65k" in p.stdout
    # a second call appends to the same result set
    p = _run("--dry-run", "--workloads", "bench/models/tiny_mlp.py:small", "--modes", "bulk-sync", "--json", str(out),
             "--no-isolate", env={"TRITON_INTERPRET": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    recs = json.loads(out.read_text())
    assert [r["workload"] for r in recs] == ["nerf_65k", "tiny_mlp:small"] and recs[1]["correct"]
    assert (tmp_path / "r.png").stat().st_size > 1000


def test_dry_run_training_step(tmp_path):
    """--train: one training step through torch.compile(backend='kitsune'), every gradient checked (CPU, fp32)."""
    out = tmp_path / "t.json"
    p = _run("--dry-run", "--train", "--workloads", "mlp_gpt3_T256", "--modes", "bulk-sync", "--json", str(out),
             env={"TRITON_INTERPRET": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    (r,) = json.loads(out.read_text())
    for k in REQUIRED:
        assert k in r, k
    assert r["train"] is True and r["correct"] is True and r["rel_err"] < 1e-4
    assert r["backend_graphs"] == ["kitsune"] and r["kitsune_backward"] is True
    assert r["kitsune_ms"] is None  # no timing on the CPU
    assert "bulk-sync train" in p.stdout and "backward compiled by Kitsune: yes" in p.stdout


def test_training_gradient_check():
    import torch

    from kitsune.bench.train import _ok, grad_errors

    w = {"a": torch.ones(3), "b": torch.ones(2)}
    assert _ok(grad_errors({"a": torch.ones(3), "b": torch.ones(2) * 1.01}, w))
    assert not _ok(grad_errors({"a": torch.ones(3), "b": torch.ones(2) * 1.05}, w))
    errs = grad_errors({"a": torch.ones(3)}, w)  # a missing gradient fails
    assert errs["b"] != errs["b"] and not _ok(errs)
    assert not _ok(grad_errors({"a": torch.full((3,), float("nan")), "b": torch.ones(2)}, w))


def test_unknown_workload_is_an_error():
    p = _run("--dry-run", "--workloads", "nope")
    assert p.returncode == 2 and "unknown workloads" in p.stderr


def _records():
    base = {"device": "NVIDIA H100 80GB HBM3", "date": "2026-11-23T00:00:00Z", "torch": "2.11", "triton": "3.6.0"}
    return [{**base, "workload": "w1", "mode": "dataflow", "correct": True, "rel_err": 3e-3, "kitsune_ms": 0.2,
             "eager_ms": 0.4, "eager_graph_ms": 0.3, "inductor_ms": 0.35, "inductor_graph_ms": 0.25, "speedup": 1.25,
             "floor_ms": 0.05, "fraction_of_floor": 0.25, "dram_bytes": 2e6, "inductor_dram_bytes": 3e6},
            {**base, "workload": "w1", "mode": "bulk-sync", "correct": False, "rel_err": 0.5, "kitsune_ms": None,
             "inductor_graph_ms": 0.25, "error": "rel err 5.000e-01 >= 0.02: wrong result, not timed"}]


def test_table_rewrites_the_marked_readme_section(tmp_path):
    from kitsune.bench.table import BEGIN, END, main

    js = tmp_path / "results.json"
    js.write_text(json.dumps(_records()))
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\nbefore\n{BEGIN}\nold table\n{END}\nafter\n")
    assert main([str(tmp_path), "--readme", str(readme)]) == 0
    s = readme.read_text()
    assert "old table" not in s and s.startswith("# x\n\nbefore\n") and s.endswith(f"{END}\nafter\n")
    assert "| w1 | dataflow | yes (3.0e-03) | 0.200 | 0.400 | 0.300 | 0.350 | 0.250 | 1.25 | 0.050 | 25% | 2 / 3 |" in s
    assert "| w1 | bulk-sync | **no**" in s


def test_plot_and_ncu_parsing(tmp_path):
    pytest.importorskip("matplotlib")
    from kitsune.bench.harness import append_json, parse_ncu_csv, plot

    js = tmp_path / "a.json"
    append_json(str(js), _records()[:1])
    append_json(str(js), _records()[1:])
    assert len(json.loads(js.read_text())) == 2
    plot(json.loads(js.read_text()), str(tmp_path / "p.png"))
    import matplotlib.image as mpimg

    assert mpimg.imread(str(tmp_path / "p.png")).shape[0] > 100
    csv = ('==PROF== Connected\n"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
           '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
           '"0","1","python","h","k0","1","7","(128, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics",'
           '"dram__bytes_read.sum","byte","1,048,576"\n'
           '"0","1","python","h","k0","1","7","(128, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics",'
           '"dram__bytes_write.sum","byte","4096"\n'
           '"1","1","python","h","k1","1","7","(128, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics",'
           '"dram__bytes_read.sum","Kbyte","2"\n')
    assert parse_ncu_csv(csv) == (1048576 + 2000, 4096, 2)


# ------------------------------------------------------------------ GPU (the lead runs these: pytest -m gpu)

WORKLOADS = ["mlp_gpt3_T1024", "mlp_gpt3_T256", "llama_decode_b1", "llama_decode_b8", "dlrm_b2048", "nerf_65k",
             "mgn_10k", "inception_b8"]
RESULTS = Path(os.environ.get("KITSUNE_BENCH_RESULTS", ROOT / "bench" / "results"))


@pytest.mark.gpu
@pytest.mark.parametrize("workload", WORKLOADS)
def test_gpu_bench(workload):
    out = RESULTS / "bench.json"
    p = _run("--workloads", workload, "--json", str(out), "--backend", timeout=600)
    print(p.stdout)
    assert p.returncode == 0, p.stderr[-3000:]


@pytest.mark.gpu
@pytest.mark.parametrize("workload", ["llama_decode_b1", "nerf_65k"])
def test_gpu_timeline(workload):
    p = _run("--timeline", workload, "--out", str(RESULTS / "timeline"), "--json", str(RESULTS / "timeline.json"),
             timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    for mode in ("dataflow", "bulk-sync"):
        assert (RESULTS / "timeline" / f"{workload}_{mode}" / "timeline.png").exists()


def test_compile_time_dry_run(tmp_path):
    """bench/compile_time.py on the CPU: the hand-written GPT-2 (the GPU machine's fallback without
    transformers), cold caches in a child process, phases recorded, output checked against eager."""
    out = tmp_path / "ct.json"
    p = subprocess.run([sys.executable, "bench/compile_time.py", "--dry-run", "--model", "handwritten", "--modes",
                        "bulk-sync", "--peers", "none", "--timeout", "600", "--json", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    res = json.loads(out.read_text())
    for k in ("device", "date", "torch", "triton", "config", "records"):
        assert k in res, k
    (r,) = res["records"]
    assert r["what"] == "kitsune:bulk-sync" and r["correct"] is True and r["rel_err"] < 1e-4
    assert r["model"].startswith("hand-written") and r["interpreter"] is True
    ph = r["phases"]
    for k in ("torch.export", "import", "graph-canonicalize", "kitsune-allocate-sms", "verify", "codegen",
              "load module", "first call"):
        assert k in ph and ph[k] >= 0, k
    assert r["total_s"] >= r["compile_s"] > 0
    # two identical layers: their kernels share functions
    assert r["distinct_kernels"] < r["kernels"]
    assert "kitsune:bulk-sync" in p.stdout and "phases" in p.stdout


@pytest.mark.parametrize("model", ["bench/models/bert_layer.py:small", "bench/models/gpt2.py:small"])
def test_dry_run_transformers_outside_the_suite(tmp_path, model):
    """The transformer model files the GPU runs measure (a BERT layer: q / k / v merged by kitsune-merge-siblings,
    the prefill attention template; GPT-2: causal attention, pre-LayerNorm) at their small sizes on the CPU:
    correct in both modes (the template's own checks: test_flash_attention)."""
    out = tmp_path / "r.json"
    p = _run("--dry-run", "--workloads", model, "--json", str(out), env={"TRITON_INTERPRET": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    recs = json.loads(out.read_text())
    assert {r["mode"] for r in recs} == {"dataflow", "bulk-sync"} and all(r["correct"] for r in recs), recs
    assert all(r["rel_err"] < 1e-4 for r in recs)


def test_paired_timing_takes_the_sides_in_turn(monkeypatch):
    """``paired_ms`` times the two sides alternately, the order flipped each round (a b, b a, ...), and returns each
    side's median: a GPU that slows as it warms (here each timing 1 us longer than the last) charges both alike."""
    from kitsune.bench import harness

    calls = []

    def fake_bench(f):
        calls.append(f())
        return 100.0 + len(calls)

    monkeypatch.setattr(harness, "bench_ms", fake_bench)
    ta, tb = harness.paired_ms(lambda: "a", lambda: "b", 4)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    # a timed 101, 104, 105, 108; b 102, 103, 106, 107: the same median, where blocks (a first) would give a 2.5 less
    assert ta == tb == 104.5


def test_table_says_which_rows_were_timed_in_turn():
    from kitsune.bench.table import markdown

    rec = {"workload": "w", "mode": "bulk-sync", "correct": True, "kitsune_ms": 1.0, "inductor_graph_ms": 1.1,
           "date": "2026-11-28"}
    assert "in turn" not in markdown([rec])
    assert "timed in turn (4 rounds" in markdown([{**rec, "paired_rounds": 4}])
    mixed = markdown([{**rec, "paired_rounds": 4}, {**rec, "workload": "v"}])
    assert "medians): w; the other rows as blocks" in mixed
