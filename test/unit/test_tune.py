"""kitsune-tune's view of a program: the tasks it times are the ones a compile schedules, timed on inputs and
operand placements a model gives them."""

from __future__ import annotations


def test_tuner_sees_the_pipelines_tasks_and_draws_indices_over_their_rows():
    """kitsune-tune's tasks are the ones a compile schedules (kitsune-pipeline's task-forming passes: here the edge
    GEMM over the edge features, K 16, its projected endpoints gathered in its epilogue, on the gemm template),
    and its random index inputs cover the rows they index (a gather / scatter over two rows would time contention
    and cache hits, not the task)."""
    import torch
    from torch import nn

    from kitsune.frontend.torch_export import import_module
    from kitsune.schedule import isolate
    from kitsune.tools.tune import scheduled_tasks

    class Message(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3 * 16, 32)

        def forward(self, x, e, src, dst):
            return torch.relu(self.fc(torch.cat([x[src], x[dst], e], -1)))

    args = (torch.randn(300, 16), torch.randn(4000, 16), torch.randint(0, 300, (4000,)),
            torch.randint(0, 300, (4000,)))
    module, _ = import_module(Message(), args, None, with_weights=False)
    tasks = scheduled_tasks(module, "h100")
    edge = [(t, c) for t, c in tasks if c.problem is not None and c.problem.M == 4000]
    assert len(edge) == 1 and edge[0][1].template == "gemm" and edge[0][1].problem.K == 16, tasks
    m = isolate.task_module(edge[0][0])
    ins = isolate.random_inputs(m, "cpu", seed=1)
    ints = [x for x in ins if not x.is_floating_point()]
    assert len(ints) == 2 and all(int(x.max()) > 200 and int(x.min()) >= 0 and int(x.max()) < 300 for x in ints)


def test_tuner_rotates_operand_copies_past_the_l2():
    """kitsune-tune's timing rotates copies of a task's operands so that they are twice the L2 together: a 33.5 MB
    weight gets three copies on a 50 MB L2, a 600 MB one none extra, and never more copies than launches."""
    from kitsune.schedule.isolate import rotation_copies

    mb = 1 << 20
    assert rotation_copies(int(33.5 * mb), 50 * mb, 10) == 3
    assert rotation_copies(600 * mb, 50 * mb, 10) == 1
    assert rotation_copies(1 * mb, 50 * mb, 10) == 10


def test_isolated_task_inputs_give_a_finite_reference():
    """A task whose epilogue is an RMS norm over a buffer of squares (the graph's values are never negative) gets
    NaN on N(0, s) inputs; ``reference_inputs`` then draws their magnitudes, and the generic evaluator's result (the
    tuner's and bench/kernels' reference) is finite and what torch computes on those inputs."""
    import torch
    from torch import nn

    from kitsune.frontend.torch_export import import_module
    from kitsune.schedule import isolate
    from kitsune.tools.tune import scheduled_tasks

    class NormedByGivenSquares(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(64, 32, bias=False)

        def forward(self, x, sq):
            return self.fc(x) * torch.rsqrt(sq.mean(-1, keepdim=True) + 1e-5)

    args = (torch.randn(2, 64), torch.randn(2, 64))
    module, _ = import_module(NormedByGivenSquares(), args, None, with_weights=False)
    (task, _), = [(t, c) for t, c in scheduled_tasks(module, "h100") if c.problem is not None]
    m = isolate.task_module(task)
    x, w, sq = isolate.random_inputs(m, "cpu")  # (the task's inputs: x, the weight, the squares)
    assert (w.shape, sq.shape) == ((32, 64), (2, 64)) and float(sq.mean(-1).min()) + 1e-5 < 0  # NaN, torch too
    ins, ref = isolate.reference_inputs(m, "cpu")
    assert bool(ref.isfinite().all()) and all(bool((t >= 0).all()) for t in ins)
    x, w, sq = ins
    assert torch.allclose(ref, (x @ w.T) * torch.rsqrt(sq.mean(-1, keepdim=True) + 1e-5), rtol=1e-4, atol=1e-6)


def test_an_isolated_gemms_weight_stays_a_parameter():
    """A linear's weight is a parameter of its program, so in its isolation too (uploaded once, packed where its
    program packs it: ``templates/gemm_tma.py``); its input stays an input."""
    import torch
    from torch import nn

    from kitsune.frontend.torch_export import import_module
    from kitsune.schedule import isolate
    from kitsune.tools.tune import scheduled_tasks

    module, _ = import_module(nn.Linear(64, 128), (torch.randn(256, 64), ), None, with_weights=False)
    (task, c), = [(t, c) for t, c in scheduled_tasks(module, "h100") if c.problem is not None]
    assert c.template == "gemm"
    f = [o for o in isolate.task_module(task).walk() if o.name == "func.func"][0]
    kinds = [a.data.get("kitsune.kind") for a in f.arg_attrs.data]
    assert [k.data if k is not None else None for k in kinds] == [None, "parameter", "parameter"], kinds


def test_a_conv_configs_tile_is_the_schedules():
    """A conv config's tile (``conv_tile``: BF channels by a block of at most BM whole output rows, what
    ``tune_task`` and ``bench/kernels/run.py`` time each config with) is ``conv_choice``'s for the config it
    chose."""
    import torch
    from torch import nn

    from kitsune.frontend.torch_export import import_module
    from kitsune.schedule.configs import ConvConfig
    from kitsune.schedule.roles import roles_of
    from kitsune.schedule.select import conv_tile
    from kitsune.tools.tune import TUNED_TEMPLATES, scheduled_tasks

    class Conv(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(16, 48, 3, padding=1)

        def forward(self, x):
            return torch.relu(self.c(x))

    module, _ = import_module(Conv(), (torch.randn(2, 16, 20, 20),), None, with_weights=False)
    (task, c), = [(t, c) for t, c in scheduled_tasks(module, "h100") if c.problem is not None]
    assert c.template == "conv" and "conv" in TUNED_TEMPLATES
    r = roles_of(c.anchor)
    assert conv_tile(r, c.config) == tuple(c.tile)
    assert conv_tile(r, ConvConfig(BF=32, BM=64)) == (1, 32, 3, 20)  # three whole 20-wide rows of 64 pixels
    assert conv_tile(r, ConvConfig(BF=64, BM=16)) == (1, 48, 1, 16)  # a row segment, every channel


def test_an_isolated_convolution_keeps_its_programs_memory_layout():
    """A convolution between two others reads a channels-last input and writes a channels-last result in its
    program (``kitsune.codegen.layouts``), its 3x3 weight packed: isolated for tuning it keeps all three (its
    input and its parameters bound as parameters, the input with ``kitsune.order``, the result with a result
    attribute; the generated module's ORDERS say so), and computes torch's result; the first convolution, whose
    input is the program's, keeps plain NCHW inputs."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    from kitsune.codegen.layouts import CHANNELS_LAST, PACKED_WEIGHT
    from kitsune.codegen.triton_gen import generate_triton
    from kitsune.frontend.torch_export import import_module
    from kitsune.schedule import isolate
    from kitsune.schedule.roles import roles_of
    from kitsune.schedule.select import conv_tile
    from kitsune.tools.tune import scheduled_tasks

    class Three(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(16, 32, 1)
            self.b = nn.Conv2d(32, 48, 3, padding=1)
            self.c = nn.Conv2d(48, 8, 3, padding=1)

        def forward(self, x):
            return self.c(torch.relu(self.b(torch.relu(self.a(x)))))

    module, _ = import_module(Three(), (torch.randn(2, 16, 12, 12),), None, with_weights=False)
    (first, _), (task, c), _ = [(t, c) for t, c in scheduled_tasks(module, "h100") if c.problem is not None]

    def kinds(m):
        f = [o for o in m.walk() if o.name == "func.func"][0]
        return [(a.data.get("kitsune.kind"), a.data.get("kitsune.order")) for a in f.arg_attrs.data]

    assert all(k is None and o is None for k, o in kinds(isolate.task_module(first)))
    base = isolate.task_module(task)
    assert [(k.data if k else None, o.data if o else None) for k, o in kinds(base)] == [
        ("parameter", "0,2,3,1"), ("parameter", None), ("parameter", None)]
    m = isolate.lower(isolate.with_config(base, "conv", c.config, conv_tile(roles_of(c.anchor), c.config)), "h100")
    orders = {}
    exec(next(ln for ln in generate_triton(m).splitlines() if ln.startswith("ORDERS")), {}, orders)
    (out_name,) = [n for n in orders["ORDERS"] if not n.startswith("arg")]  # the result, read by the last conv
    assert orders["ORDERS"] == {"arg0": CHANNELS_LAST, "arg1": PACKED_WEIGHT, out_name: CHANNELS_LAST}
    ins, ref = isolate.reference_inputs(base, "cpu")
    prog, call = isolate.load(m, ins, "cpu")
    assert call == []  # every argument bound at load time, in its storage order
    x, w, b = ins
    out = prog(*call)[0].float()
    assert isolate.rel_err(out, torch.relu(F.conv2d(x, w, b, padding=1))) < 1e-5
    assert isolate.rel_err(ref, torch.relu(F.conv2d(x, w, b, padding=1))) < 1e-5


def test_an_isolated_convolution_over_an_elementwise_writer_reads_it_channels_last():
    """A 3 x 3 convolution over SiLU(x) (a UNet's GroupNorm affine + SiLU before each convolution): the SiLU is a
    task of its own, tiled across the channels by the schedule so that its program stores the result
    channels-last (``choose_schedules.tile_channels_last_writers``). The tuner sees the same: the convolution's
    problem has ``layout=1`` and its isolation binds the input channels-last, as the program reads it (an NCHW
    isolation timed the gathered form: 95-116 us against the program's 32 on the H100)."""
    import torch
    from torch import nn

    from kitsune.frontend.torch_export import import_module
    from kitsune.schedule import isolate
    from kitsune.tools.tune import scheduled_tasks

    model = nn.Sequential(nn.SiLU(), nn.Conv2d(32, 16, 3, padding=1))
    module, _ = import_module(model, (torch.randn(2, 32, 8, 8),), None, with_weights=False)
    ((task, c),) = [(t, c) for t, c in scheduled_tasks(module, "h100") if c.template == "conv"]
    assert c.problem.layout == 1, c.problem.key()
    f = [o for o in isolate.task_module(task).walk() if o.name == "func.func"][0]
    order = f.arg_attrs.data[0].data.get("kitsune.order")
    assert order is not None and order.data == "0,2,3,1"


def test_user_entry_put_back_exactly(tmp_path, monkeypatch):
    """``kitsune-tune --in-program`` writes each candidate into the user's database (``kitsune.compile`` reads it
    there) and then puts the entry back as it was: ``put_user_entry`` restores an earlier entry byte for byte,
    or removes one that was not there, and lookups follow."""
    from kitsune.schedule import db
    from kitsune.schedule.configs import config_from
    from kitsune.schedule.configs import Problem

    monkeypatch.setenv("KITSUNE_CACHE_DIR", str(tmp_path))
    p = Problem("gemv", 8, 4096, 4096)  # (a shape the packaged database has no entry for)
    k = db.key(p, "h100")
    assert db.user_entry(k) is None and db.lookup(p, "h100") is None
    db.store(p, "h100", config_from("gemv", {"BN": 16, "BK": 512, "SPLIT": 1}), 1e-5, None)
    before = db.user_entry(k)
    assert db.lookup(p, "h100").BN == 16
    db.store(p, "h100", config_from("gemv", {"BN": 64, "BK": 256, "SPLIT": 2}), 0.0, None)
    assert db.lookup(p, "h100").BN == 64
    db.put_user_entry(k, before)
    assert db.user_entry(k) == before and db.lookup(p, "h100").BN == 16
    db.put_user_entry(k, None)
    assert db.user_entry(k) is None and db.lookup(p, "h100") is None


def test_lookup_searches_the_runs_own_file_first(tmp_path, monkeypatch):
    """``kitsune-tune --db F``: the incumbent of a task is F's winner where F has one (the entry the run would
    overwrite), else the user's, else the packaged one; ``kitsune.compile`` (no path) reads the user's."""
    from kitsune.schedule import db
    from kitsune.schedule.configs import config_from
    from kitsune.schedule.configs import Problem

    monkeypatch.setenv("KITSUNE_CACHE_DIR", str(tmp_path / "cache"))
    own = tmp_path / "run.json"
    p = Problem("gemv", 8, 4096, 4096)  # (a shape the packaged database has no entry for)
    db.store(p, "h100", config_from("gemv", {"BN": 16, "BK": 512, "SPLIT": 1}), 1e-5, None)  # the user's
    assert db.lookup(p, "h100", own).BN == 16  # (the file does not exist yet: the user's)
    db.store(p, "h100", config_from("gemv", {"BN": 64, "BK": 256, "SPLIT": 2}), 1e-5, None, own)
    assert db.lookup(p, "h100", own).BN == 64 and db.lookup(p, "h100").BN == 16
    monkeypatch.setenv("KITSUNE_TUNING_DB", "0")
    assert db.lookup(p, "h100", own) is None


def test_a_gpu_reads_its_twins_entries_where_it_has_none_of_its_own(tmp_path, monkeypatch):
    """An H200 (the H100's die, faster memory) takes the H100's tuned config, placement and launch setting where
    it has no entry of its own; its own entry wins once it has one, and a write goes under its own name."""
    from kitsune.gpu import get_gpu
    from kitsune.schedule import db
    from kitsune.schedule.configs import Problem, config_from

    monkeypatch.setenv("KITSUNE_CACHE_DIR", str(tmp_path / "cache"))
    p = Problem("gemv", 8, 4096, 4096)  # (a shape the packaged database has no entry for)
    assert db.lookup(p, "h200") is None
    db.store(p, "h100", config_from("gemv", {"BN": 16, "BK": 512, "SPLIT": 1}), 1e-5, None)
    assert db.lookup(p, "h200").BN == 16
    db.store(p, "h200", config_from("gemv", {"BN": 64, "BK": 256, "SPLIT": 2}), 1e-5, None)
    assert db.lookup(p, "h200").BN == 64 and db.lookup(p, "h100").BN == 16
    assert db.user_entry(db.key(p, "h200"))["config"]["BN"] == 64
    db.store_placement("g0", "h100", "spatial", {"spatial": 1.0})
    db.store_launch("g0", "dataflow", "h100", 1, {1: 2.0})
    assert db.lookup_placement("g0", "h200") == "spatial" and db.lookup_launch("g0", "dataflow", "h200") == 1
    db.store_launch("g0", "dataflow", "h200", 0, {0: 1.0})
    assert db.lookup_launch("g0", "dataflow", "h200") == 0 and db.lookup_launch("g0", "dataflow", "h100") == 1
    # the packaged suite entries (tuned on the H100) serve the H200 too
    import json
    k = next(k for k in json.loads(db.PACKAGED.read_text()) if k.startswith("h100|gemm|"))
    assert db._entry_of("h200", lambda g: f"{get_gpu(g).name}|{k.split('|', 1)[1]}") is not None


def test_in_program_candidates_are_checked_timed_and_the_best_retimed():
    """``_in_program_times`` with a fake program: a candidate that fails to build and one whose outputs differ are
    errors, not times; the fastest of the rest is re-timed against the incumbent in alternating rounds."""
    import torch

    from kitsune.schedule.configs import GemvConfig, Problem
    from kitsune.tools import tune

    p = Problem("gemv", 8, 4096, 4096)
    inc, fast, slow, broken, wrong = (GemvConfig(BN=b, DOT=True) for b in (64, 32, 16, 8, 4))
    installed = [inc]
    speed = {inc: 10.0, fast: 8.0, slow: 12.0, wrong: 1.0}
    order = []

    def build():
        c = installed[-1]
        if c == broken:
            raise RuntimeError("CompilationError: out of shared memory\nmore")
        out = torch.ones(4) * (2.0 if c == wrong else 1.0)
        return [out], c

    def us(graph):
        order.append(graph)
        return speed[graph]

    times, med, errors = tune._in_program_times("t", p, inc, [fast, slow, broken, wrong], build, us, 3,
                                                installed.append)
    assert set(times) == {inc, fast, slow} and set(med) == {inc, fast} and med[fast] == 8.0
    assert errors[str(broken.as_dict())].startswith("RuntimeError: CompilationError: out of shared memory")
    assert "rel err" in errors[str(wrong.as_dict())]
    assert order[-6:] == [inc, fast, fast, inc, inc, fast]


def test_launch_plan_graph_keeps_its_program_alive(monkeypatch):
    """The CUDA graph of a program's launch holds the compiled program and the launch's tensors: its replays read
    them at the captured addresses, and the in-program tuner keeps only graphs (their programs freed under them
    ended a tuning run on the H100 with an illegal memory access)."""
    import gc
    import types
    import weakref

    import torch

    import kitsune.runtime.program as rp
    from kitsune.tools import tune

    captured = []

    class Graph:  # what capture_graph returns first, in place of a torch.cuda.CUDAGraph
        pass

    def capture(fn, warmup=1):
        captured.append(fn)
        return Graph(), None

    monkeypatch.setattr(rp, "capture_graph", capture)

    class Prog:
        def __init__(self):
            self._tensors = {"w": torch.ones(3)}
            self.state = {}
            self.module = types.SimpleNamespace(launch=lambda state, env: None)

        def _prepare(self, ins):
            return {"x": ins[0].clone()}  # (a copy the launch reads: it must live on too)

    class Compiled:
        def __init__(self):
            self.program = Prog()

    cm = Compiled()
    alive = weakref.ref(cm)
    g = tune.launch_plan_graph(cm, (torch.zeros(2),))
    del cm
    gc.collect()
    assert alive() is not None and captured
    held_cm, env = g.keepalive
    assert held_cm is alive() and set(env) == {"w", "x"}
    del g, held_cm, env
    gc.collect()
    assert alive() is None  # (nothing else held it: the check above can fail)


def test_in_program_tuning_puts_the_user_entry_back_after_a_fault(tmp_path, monkeypatch):
    """A fault in the middle of a task's candidates (here an exception after a candidate was written into the user's
    database; on the GPU a kernel that ends the CUDA context) leaves the user's entry as it was."""
    import pytest
    import torch
    from torch import nn

    from kitsune.frontend.torch_export import import_module
    from kitsune.schedule import db
    from kitsune.schedule.configs import GemvConfig
    from kitsune.tools import tune

    monkeypatch.setenv("KITSUNE_CACHE_DIR", str(tmp_path))
    m = nn.Linear(256, 128, bias=False).to(torch.bfloat16)
    x = torch.randn(8, 256, dtype=torch.bfloat16)
    ((_, c),) = [(t, c) for t, c in tune.scheduled_tasks(import_module(m, (x,))[0], "h100") if c.template == "gemv"]
    db.store(c.problem, "h100", GemvConfig(BN=32, BK=128, DOT=True), 1e-5, None)
    k = db.key(c.problem, "h100")
    saved = db.user_entry(k)

    def fault(name, p, incumbent, cands, build, us, rounds, install):
        install(cands[0])
        assert db.user_entry(k) != saved
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(tune, "_in_program_times", fault)
    with pytest.raises(RuntimeError, match="illegal memory access"):
        tune.tune_in_program(m, (x,), "h100", max_candidates=2)
    assert db.user_entry(k) == saved


def test_only_filter_and_in_programs_database(capsys):
    """``--only`` keeps the configs whose fields take the given values (one filter for the isolated and the
    in-program tuner); ``--in-program`` with ``--db`` is refused: its candidates must sit where kitsune.compile
    reads them."""
    import pytest

    from kitsune.schedule.configs import GemvConfig, Problem
    from kitsune.tools import tune

    space = GemvConfig.space(Problem("gemv", 8, 4096, 4096))
    kept = tune.only_configs(space, tune.parse_only("BN=32;DOT=1"))
    assert kept and all(c.BN == 32 and c.DOT for c in kept)
    assert len(kept) == sum(1 for c in space if c.BN == 32 and c.DOT)
    assert tune.only_configs(space, None) == space
    with pytest.raises(SystemExit) as e:
        tune.main(["--in-program", "--db", "elsewhere.json", "--workload", "llama_decode_b8"])
    assert e.value.code == 2 and "--db does not apply" in capsys.readouterr().err


def test_gemv_default_is_never_the_weight_first_form():
    """The weight-first tensor-core gemv (SWAP) is in the tuning space only: the heuristic default is an x-first
    config for every gemv problem, also where a short K leaves the x-first space empty but not the weight-first
    one (a GPT-2 of d = 32 at 8 tokens: K = 32 failed with an empty choice)."""
    import itertools

    from kitsune.schedule.configs import GemvConfig, Problem, default_config

    swap_only = 0
    for M, N, K in itertools.product((1, 2, 8, 16), (5, 64, 2048), (8, 32, 48, 64, 2048)):
        p = Problem("gemv", M=M, N=N, K=K)
        space = GemvConfig.space(p)
        swap_only += any(c.SWAP for c in space) and not any(not c.SWAP and c.BK > 2 * K for c in space) and K <= 48
        assert not default_config(p, "h100").SWAP, p
        assert default_config(p, "h100").heuristic(), p  # (nor an 8-warp row form: tuned only)
        assert any(c.warps == 8 for c in space) == (M == 1), p  # (the row forms: M = 1)
    assert swap_only  # (the case the fallback is for was drawn)


def test_conv_entries_are_keyed_by_the_inputs_layout(monkeypatch, tmp_path):
    """Two convolutions of one shape, the first over the program's NCHW input, the second over the first's result,
    which the program stores channels-last: their problems differ by ``layout`` (the first's key is the one entries
    always had), so each takes its own database entry; an entry keyed without the layout still serves a
    channels-last input that has none of its own. The results match eager (interpreter)."""
    import json

    import torch
    from torch import nn

    import kitsune
    from kitsune.frontend.torch_export import import_module, rel_err
    from kitsune.tools.tune import scheduled_tasks

    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(16, 16, 3, padding=1)
            self.b = nn.Conv2d(16, 16, 3, padding=1)

        def forward(self, x):
            return self.b(torch.relu(self.a(x)))

    torch.manual_seed(0)
    m, x = Two(), torch.randn(1, 16, 8, 8)
    plain = "h100|conv|template=conv,M=64,N=16,K=144,batch=1,elem_bytes=4,out_elems=0,row=8,rows=64,split_ok=False"
    module, _ = import_module(m, (x,), None, with_weights=False)
    keys = [c.problem.key() for _, c in scheduled_tasks(module, "h100") if c.template == "conv"]
    assert keys == [plain.split("|")[2], plain.split("|")[2] + ",layout=1"], keys

    def conv_configs(entries):
        d = tmp_path / str(len(list(tmp_path.iterdir())))
        d.mkdir()
        (d / "tuning.json").write_text(json.dumps(entries))
        monkeypatch.setenv("KITSUNE_CACHE_DIR", str(d))
        cm = kitsune.compile(m, (x,), mode="bulk-sync", device="cpu", cache=False)
        with torch.no_grad():
            got = cm(x)
            got = got[0] if isinstance(got, (tuple, list)) else got
            assert rel_err(got.numpy(), m(x).numpy()) < 1e-4
        return [ln for ln in cm.lowered.splitlines() if "gpu_queue.stage" in ln and 'template = "conv"' in ln]

    nchw = {"BF": 16, "BM": 32, "BK": 32, "warps": 4, "stages": 3}
    last = {"BF": 16, "BM": 64, "BK": 16, "warps": 4, "stages": 2}
    a, b = conv_configs({plain: {"config": nchw, "ms": 0.01}, plain + ",layout=1": {"config": last, "ms": 0.01}})
    assert "BM = 32" in a and "BK = 32" in a, a
    assert "BM = 64" in b and "BK = 16" in b, b
    a, b = conv_configs({plain: {"config": nchw, "ms": 0.01}})  # no channels-last entry: the plain one serves both
    assert "BM = 32" in a and "BM = 32" in b, (a, b)


def test_gemv_shared_memory_model_matches_the_compilers_ring():
    """A tensor-core gemv config's shared memory is the ring Triton 3.6 allocates for it on sm_90 (the AOT report of
    llama_decode_b8's kernels, 2026-11-27): ``stages - 1`` buffers of [16 + BN, BK] x first, ``stages`` weight first,
    one more at 128 weight-first columns (the configs whose compile failed for want of it were ranked as fitting)."""
    from kitsune.schedule.configs import GemvConfig, Problem

    p = Problem("gemv", M=8, N=2048, K=8192)
    measured = {(64, 256, 3, False): 81920, (32, 512, 3, False): 98304, (64, 256, 3, True): 122880,
                (128, 256, 3, True): 294912, (128, 128, 4, True): 184320}
    for (bn, bk, stages, swap), smem in measured.items():
        cfg = GemvConfig(BN=bn, BK=bk, DOT=True, stages=stages, SWAP=swap)
        assert cfg.resources(p).smem_bytes == smem, (cfg, cfg.resources(p).smem_bytes, smem)
    assert GemvConfig(BN=64, BK=256, DOT=False).resources(p).smem_bytes == 0  # (FMA: registers only)


def test_gemm_default_is_the_gluon_form_of_the_cost_models_tile():
    """The heuristic default of a 16-bit gemm: the Gluon form of the cost model's pick (128 x 256 pipelined at 3
    stages), warp-specialised 128 x 128 at 5 for a short K (<= 1024, bert's 768); a split pick and f32 operands keep
    the Triton form; the pick itself is still the cost model's (the forms tie in it)."""
    from kitsune.schedule.configs import GemmConfig, Problem, default_config

    long_k = default_config(Problem("gemm", M=1024, N=12288, K=6144))
    assert (long_k.BM, long_k.BN, long_k.GLUON, long_k.stages) == (128, 256, 1, 3)
    short_k = default_config(Problem("gemm", M=4096, N=3072, K=768))
    assert (short_k.BM, short_k.BN, short_k.GLUON, short_k.stages, short_k.warps) == (128, 128, 2, 5, 8)
    assert default_config(Problem("gemm", M=4096, N=3072, K=768, elem_bytes=4)).GLUON == 0  # (f32: no Gluon form)
    split = default_config(Problem("gemm", M=256, N=768, K=3072))
    assert split.SPLIT > 1 and split.GLUON == 0
    for p in (Problem("gemm", M=4096, N=3072, K=768), Problem("gemm", M=1024, N=12288, K=6144)):
        assert default_config(p) in GemmConfig.space(p)
