"""Build plancheck, compiling its hot path to C with mypyc when it can.

Every scored prediction runs through the same few modules (reading completions, the
reference evaluator's verdict, the one-pass static checker, the symbolic interpreter's
canonical forms, the batch scorer). mypyc compiles them from their type annotations, as it
does mypy and black; they then score 1.4 to 1.8 times as fast (``bench/bench_score.py``
prints which build it measures). The Python sources stay the package's sources: every module also
runs as plain Python, and ``plancheck --version`` says which build is installed.

``PLANCHECK_COMPILE`` chooses:

* unset or ``auto``: compile when mypyc and a C compiler are at hand, else install plain
  Python and say why on stderr;
* ``1``: compile, and fail the install if that fails (CI sets this);
* ``0``: plain Python only (quickest to install; edits to the sources take effect at once).

An editable install (``pip install -e .``) compiles in place: after editing a compiled
module, install again (``plancheck --version`` and the test suite report stale modules).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

# The modules every scored item runs through (and the static checker's per-step phases, and
# the trajectory metrics of a full `plancheck score`).
HOT_PATH = [
    "plancheck/fast_json.py",
    "plancheck/diagnostics/limits.py",
    "plancheck/diagnostics/findings.py",
    "plancheck/compiler/checker.py",
    "plancheck/compiler/lowering.py",
    "plancheck/interp/canonical.py",
    "plancheck/interp/checks.py",
    "plancheck/dora/paper_answers.py",
    "plancheck/scoring/batch.py",
    "plancheck/scoring/compact.py",
    "plancheck/scoring/fpof.py",
    "plancheck/scoring/gold.py",
    "plancheck/scoring/gold_steps.py",
    "plancheck/scoring/item_scorer.py",
    "plancheck/scoring/per_item_line.py",
    "plancheck/scoring/per_item_writer.py",
    "plancheck/scoring/prediction_files.py",
    "plancheck/scoring/summary.py",
    "plancheck/scoring/metrics.py",
    "plancheck/scoring/reference/__init__.py",
    "plancheck/scoring/reference/compare.py",
    "plancheck/scoring/reference/fast_paths.py",
    "plancheck/scoring/reference/prepared.py",
    "plancheck/scoring/reference/shape.py",
    "plancheck/scoring/reference/strict.py",
    "plancheck/scoring/reference/verdict.py",
    "plancheck/compiler/extraction/brackets.py",
    "plancheck/compiler/extraction/doubled_braces.py",
    "plancheck/compiler/extraction/escaped_newlines.py",
    "plancheck/compiler/extraction/isolation.py",
    "plancheck/compiler/extraction/lenient_json.py",
    "plancheck/compiler/extraction/mend.py",
    "plancheck/compiler/extraction/prefixed_plan.py",
    "plancheck/compiler/extraction/sentinels.py",
    "plancheck/dora/paper_metrics.py",
    "plancheck/typecheck/deps.py",
    "plancheck/typecheck/names.py",
    "plancheck/typecheck/types.py",
    "plancheck/checks/context.py",
    "plancheck/checks/phases.py",
    "plancheck/checks/registry.py",
    "plancheck/checks/rule.py",
    "plancheck/checks/run.py",
    "plancheck/checks/tables.py",
    "plancheck/checks/view.py",
    # The guard's per-call path (Guard.propose and record) and what it calls.
    "plancheck/guard/guard.py",
    "plancheck/guard/reading.py",
    "plancheck/compiler/repeated_keys.py",
    "plancheck/guard/references.py",
    "plancheck/guard/results.py",
    "plancheck/guard/verdict.py",
    "plancheck/policy/monitor.py",
    "plancheck/policy/online.py",
    "plancheck/policy/provenance.py",
    "plancheck/policy/provenance_read.py",
    "plancheck/policy/semantics.py",
    "plancheck/ir/schema_validation.py",
    "plancheck/ir/schema_values.py",
    "plancheck/ir/schema_verdict.py",
    "plancheck/formats/calls/generic.py",
    "plancheck/formats/found.py",
    "plancheck/formats/ambiguity.py",
]
# The checker's rules, one module each (plancheck/checks/rules/): all compiled, found rather
# than listed, since an interpreted class cannot subclass the compiled Rule.
_RULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plancheck", "checks", "rules")
HOT_PATH += sorted(f"plancheck/checks/rules/{name}" for name in os.listdir(_RULES)
                   if name.endswith(".py") and name != "__init__.py")
# The call shapes' readers (plancheck/formats/calls/): every call a guard reads in a chat API's
# shape goes through one, and through the check of whether it reads as two calls.
_SHAPES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plancheck", "formats",
                       "calls")
HOT_PATH += sorted(f"plancheck/formats/calls/{name}" for name in os.listdir(_SHAPES)
                   if name.endswith(".py") and name not in ("__init__.py", "generic.py"))
# mypyc type-checks what it compiles. Packages missing from the build environment are read
# as untyped (their calls stay dynamic); the project's own strict configuration is for
# development, where every dependency is installed.
MYPY_FLAGS = ["--config-file=", "--ignore-missing-imports"]
# One C file per module (multi_file), compiled on every core at once: the C compiler is most
# of an install's time, and one C file of all the modules kept it to one core. mypyc's own
# MYPYC_OPT_LEVEL overrides the optimization level (docs/benchmarks.md measures the variants).
OPT_LEVEL = "3"


def _mode() -> str:
    mode = os.environ.get("PLANCHECK_COMPILE", "auto").strip().lower() or "auto"
    if mode not in {"auto", "0", "1"}:
        sys.exit(f"PLANCHECK_COMPILE must be auto, 0 or 1, not {mode!r}")
    return mode


def _say(message: str) -> None:
    text = f"plancheck build: {message}"
    print(text, file=sys.stderr, flush=True)
    # pip keeps a build's output to itself until the build ends (all of it only with -v), so
    # a compile of minutes looked like a hang: the terminal, when there is one, is told at once.
    if not sys.stderr.isatty():
        try:
            with open("/dev/tty", "w", encoding="utf-8") as terminal:
                terminal.write(text + "\n")
        except OSError:
            pass  # no terminal (CI): stderr, which pip -v shows, has it


# The commands that build the modules. pip also runs setup.py for the metadata (egg_info,
# dist_info) before it builds: those need no compiled modules, and compiling for each made an
# install run mypyc three times.
_BUILDS = frozenset({"build", "build_ext", "bdist_wheel", "editable_wheel", "bdist", "bdist_egg",
                     "install", "develop"})


def _builds(argv: list[str]) -> bool:
    return not _BUILDS.isdisjoint(argv[1:])


def _compiled_extensions(mode: str) -> list[Any]:
    if mode == "0" or not _builds(sys.argv):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as error:
        if mode == "1":
            raise
        _say(f"installing plain Python (mypyc is not available: {error})")
        return []
    _say(f"compiling the hot path of scoring and the guard ({len(HOT_PATH)} modules) with "
         "mypyc: type-checking and generating C, then the C compiler; this takes minutes "
         "(PLANCHECK_COMPILE=0 installs plain Python at once)")
    started = time.monotonic()
    try:
        extensions = list(mypycify(
            [*MYPY_FLAGS, *HOT_PATH], opt_level=os.environ.get("MYPYC_OPT_LEVEL", OPT_LEVEL),
            debug_level="0", group_name="plancheck", multi_file=True,
        ))
        _say(f"mypyc generated the C in {time.monotonic() - started:.0f} s")
        return extensions
    except (Exception, SystemExit) as error:  # mypyc exits on a type error
        if mode == "1":
            raise
        _say(f"installing plain Python (mypyc could not compile the hot path: {error})")
        return []


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _in_parallel(compile: Any, jobs: int) -> Any:
    """``compile`` (a C compiler object's), made to compile its sources ``jobs`` at a time.

    setuptools' ``build_ext --parallel`` builds extensions side by side, but the sources of
    one extension one after another, and mypyc puts every module's C file in one extension
    (the shared library). A semaphore keeps the compiler processes of all extensions to
    ``jobs``; the largest files start first, so no long one is left for the end."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    slots = threading.BoundedSemaphore(jobs)

    def one(source: str, options: dict[str, Any]) -> list[str]:
        with slots:
            return list(compile([source], **options))

    def compile_all(sources: list[str], **options: Any) -> list[str]:
        if len(sources) < 2:
            return [obj for source in sources for obj in one(source, options)]
        largest_first = sorted(sources, key=lambda path: -os.path.getsize(path))
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            objects = {source: pool.submit(one, source, options) for source in largest_first}
            return [obj for source in sources for obj in objects[source].result()]

    return compile_all


class OptionalBuildExt(build_ext):
    """Builds the compiled modules; in ``auto`` mode a failed C build (no compiler, no
    Python headers) leaves plain Python in place instead of failing the install."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:  # no -j given: every core
            self.parallel = _cores()

    def build_extensions(self) -> None:
        jobs = _cores() if self.parallel is True else int(self.parallel or 1)
        if jobs > 1:
            self.compiler.compile = _in_parallel(self.compiler.compile, jobs)
        sources = sum(len(ext.sources) for ext in self.extensions)
        if sources:
            _say(f"the C compiler: {sources} C files, {jobs} at a time")
        super().build_extensions()

    def run(self) -> None:
        started = time.monotonic()
        try:
            super().run()
            if self.extensions:
                _say(f"the C compiler built the hot path in {time.monotonic() - started:.0f} s")
        except Exception as error:
            if _mode() == "1":
                raise
            _say(f"installing plain Python (the C build failed: {error})")
            # A compiled module needs the shared library of them all: none, or all.
            for ext in self.extensions:
                path = self.get_ext_fullpath(ext.name)
                if os.path.exists(path):
                    os.remove(path)
            self.extensions = []
        self._record()

    def _record(self) -> None:
        """Write ``plancheck/_build.json`` beside the compiled modules: the hash of each
        one's source, by which ``plancheck.build_info`` tells a stale build."""
        package = os.path.dirname(self.get_ext_fullpath("plancheck._build"))
        record = os.path.join(package, "_build.json")
        if not self.extensions:
            if os.path.exists(record):
                os.remove(record)
            return
        from mypy.version import __version__ as mypy_version

        sources = {}
        for path in HOT_PATH:
            with open(path, "rb") as source:
                sources[path[:-3].replace("/", ".")] = hashlib.sha256(source.read()).hexdigest()
        os.makedirs(package, exist_ok=True)
        with open(record, "w", encoding="utf-8") as handle:
            json.dump({"compiler": f"mypyc {mypy_version}", "sources": sources}, handle,
                      indent=1, sort_keys=True)
            handle.write("\n")


setup(ext_modules=_compiled_extensions(_mode()), cmdclass={"build_ext": OptionalBuildExt})
