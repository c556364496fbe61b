import os
import sys

import lit.formats

config.name = "kitsune"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "inputs"]
config.test_source_root = os.path.dirname(__file__)

# The tools (kitsune-opt, kitsune-run, filecheck) live next to the Python running lit.
bindir = os.path.dirname(os.path.realpath(sys.executable))
bindir_unresolved = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bindir_unresolved, bindir, os.environ.get("PATH", "")])
config.environment["PYTHONHASHSEED"] = "0"
# the tools import the kitsune package of this checkout (a worktree sharing another checkout's .venv too);
# lit passes no PYTHONPATH of its own
_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
config.environment["PYTHONPATH"] = os.pathsep.join([_root] + [p for p in [os.environ.get("PYTHONPATH")] if p])
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%inputs", os.path.join(os.path.dirname(__file__), "inputs")))
