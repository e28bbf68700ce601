"""mypy as an independent oracle for plancheck's type checker.

Generated plans (well typed and ill typed) are compiled to typed Python modules that share one
stub module; mypy runs once over the whole batch, and for every plan the bindings mypy rejects
must be exactly those plancheck reports as PC301. The same run checks every producer output
against every consumer input of the pool, and plans with name errors (which the compiler turns
into Python name errors). The other tests cover the compiled module as a program and the CLI.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mypy import api as mypy_api

import plancheck
from plancheck.cli import main
from plancheck.compiler.emit_python import (
    BindingSite,
    CompiledModule,
    compile_plans,
    compile_to_python,
    compile_toolset,
    encoding_gaps,
)
from plancheck.corpus.builtin import builtin_toolset
from plancheck.ir.lattice import Compat
from plancheck.ir.nodes import Param, Plan, Toolset, ToolSignature

TOOLSET = builtin_toolset()
TOOLS = list(TOOLSET.tools.values())
FORMATS = [".tif", ".png", ".jpg", ".npy", ".json", ".txt", ".csv", ".h5", ".shp", ".mp4"]
NAME_CODES = {"PC201", "PC202", "PC203", "PC206", "PC207", "PC208", "PC501"}
RANDOM_PLANS = 560
NAME_ERROR_PLANS = 70
MYPY_LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?:\d+:)? error: (?P<message>.*?)"
                       r"  \[(?P<code>[a-z-]+)\]$")


# --------------------------------------------------------------------------- plan generation


def _fits(output: Param, expected: str) -> bool:
    return TOOLSET.lattice.compat(output, expected) is not Compat.INCOMPATIBLE


def _literal(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.04:
        return rng.choice([3, 2.5, None, True, ["a.tif"], {"path": "a.tif"}])  # PC302 warnings
    directory = rng.choice(["data", "/mnt/in", "inputs/raw"])
    return f"{directory}/f{rng.randrange(1000)}{rng.choice(FORMATS)}"


def _outputs_before(plan: list[dict[str, Any]], index: int) -> list[tuple[int, Param]]:
    return [(s["step"], o) for s in plan[:index] for o in TOOLSET.tools[s["agent"]].outputs]


def _derive_dependence(plan: list[dict[str, Any]]) -> None:
    """Write dependence fields that agree with the references (so only types are at stake)."""
    for step in plan:
        content: dict[str, list[str]] = {}
        for value in step["inputs"].values():
            match = isinstance(value, str) and re.match(r"^<GENERATED>-(\d+)-<(.+)>$", value)
            if match:
                keys = content.setdefault(match.group(1), [])
                if match.group(2) not in keys:
                    keys.append(match.group(2))
        step["dependence"] = sorted(int(k) for k in content) or [-1]
        step["dependence_content"] = content or None


def random_plan(rng: random.Random) -> list[dict[str, Any]]:
    """A plan whose references all fit (OK or by implicit conversion)."""
    plan: list[dict[str, Any]] = []
    for index in range(rng.randint(1, 7)):
        earlier = _outputs_before(plan, index)
        consumers = [t for t in TOOLS
                     if any(_fits(o, p.type) for _, o in earlier for p in t.inputs)]
        tool = rng.choice(consumers if consumers and rng.random() < 0.8 else TOOLS)
        inputs: dict[str, Any] = {}
        for param in tool.inputs:
            if not param.required and rng.random() < 0.5:
                continue
            fitting = [(s, o) for s, o in earlier if _fits(o, param.type)]
            if fitting and rng.random() < 0.75:
                step, output = rng.choice(fitting)
                inputs[param.name] = f"<GENERATED>-{step}-<{output.name}>"
            else:
                inputs[param.name] = _literal(rng)
        plan.append({"agent": tool.name, "step": index, "inputs": inputs,
                     "outputs": list(tool.output_names)})
    _derive_dependence(plan)
    return plan


def mistype(rng: random.Random, plan: list[dict[str, Any]]) -> bool:
    """Rebind one or two inputs to type-incompatible earlier outputs; False if none exists."""
    sites = []
    for index, step in enumerate(plan):
        tool = TOOLSET.tools[step["agent"]]
        for param in tool.inputs:
            wrong = [(s, o) for s, o in _outputs_before(plan, index) if not _fits(o, param.type)]
            if wrong:
                sites.append((step, param, wrong))
    if not sites:
        return False
    for step, param, wrong in rng.sample(sites, k=min(len(sites), rng.choice([1, 1, 2]))):
        producer, output = rng.choice(wrong)
        step["inputs"][param.name] = f"<GENERATED>-{producer}-<{output.name}>"
    _derive_dependence(plan)
    return True


def name_error(rng: random.Random, plan: list[dict[str, Any]]) -> None:
    """One name error: unknown tool, input or output, missing input, step or forward step."""
    index = rng.randrange(len(plan))
    step = plan[index]
    tool = TOOLSET.tools[step["agent"]]
    kinds = ["tool", "input", "missing-step", "forward"]
    if any(p.required for p in tool.inputs):
        kinds.append("missing-input")
    if index > 0:
        kinds.append("output")
    kind = rng.choice(kinds)
    key = rng.choice(tool.input_names)
    if kind == "tool":
        step["agent"] = tool.name + "_v2"
    elif kind == "input":
        step["inputs"]["extra_" + key] = "data/x.tif"
    elif kind == "missing-input":
        del step["inputs"][rng.choice([p.name for p in tool.inputs if p.required])]
    elif kind == "missing-step":
        step["inputs"][key] = "<GENERATED>-42-<image_path>"
    elif kind == "forward":
        later = rng.randrange(index, len(plan))
        output = TOOLSET.tools[plan[later]["agent"]].output_names[0]
        step["inputs"][key] = f"<GENERATED>-{later}-<{output}>"
    else:
        producer = plan[rng.randrange(index)]
        step["inputs"][key] = f"<GENERATED>-{producer['step']}-<no_such_output>"
    _derive_dependence(plan)


def pair_plans() -> Iterator[tuple[ToolSignature, Param, ToolSignature, Param, Plan]]:
    """Every producer output bound to every consumer input of the pool, as two-step plans."""
    for producer in TOOLS:
        for output in producer.outputs:
            for consumer in TOOLS:
                for param in consumer.inputs:
                    inputs = {p.name: "data/in.tif" for p in consumer.inputs if p.required}
                    inputs[param.name] = f"<GENERATED>-0-<{output.name}>"
                    plan = [
                        {"agent": producer.name, "step": 0, "dependence": [-1],
                         "dependence_content": None, "outputs": list(producer.output_names),
                         "inputs": {p.name: "data/in.tif" for p in producer.inputs
                                    if p.required}},
                        {"agent": consumer.name, "step": 1, "dependence": [0],
                         "dependence_content": {"0": [output.name]},
                         "outputs": list(consumer.output_names), "inputs": inputs},
                    ]
                    report = plancheck.check(plan, TOOLSET)
                    assert report.plan is not None
                    yield producer, output, consumer, param, report.plan


def awkward_names() -> tuple[Toolset, list[dict[str, Any]]]:
    """A toolset whose names are keywords, builtins, helpers of the emitted module, step
    variables, or not identifiers at all; and a plan over it."""
    from plancheck.ir.nodes import TypeDecl

    types = {name: TypeDecl(name, parents) for name, parents in [
        ("Thing", ()), ("object", ("Thing",)), ("class", ("Thing",)), ("step_1", ("Thing",))]}
    tools = {
        "my tool": ToolSignature("my tool", (
            Param("class", "object"), Param("from-x", "Thing", required=False),
            Param("_call", "Thing", required=False),
        ), (Param("out-put", "class"), Param("out_put", "step_1"))),
        "object": ToolSignature("object", (Param("in", "class"),), (Param("TOOLS", "Thing"),)),
        "1st": ToolSignature("1st", (), (Param("x", "Thing"),)),
    }
    plan = [
        {"agent": "1st", "step": 0, "dependence": [-1], "dependence_content": None,
         "inputs": {}, "outputs": ["x"]},
        {"agent": "my tool", "step": 1, "dependence": [0], "dependence_content": {"0": ["x"]},
         "inputs": {"class": "a\"b'\\c.txt", "from-x": "<GENERATED>-0-<x>", "_call": 1e308},
         "outputs": ["out-put", "out_put"]},
        {"agent": "object", "step": 2, "dependence": [1],
         "dependence_content": {"1": ["out-put"]}, "inputs": {"in": "<GENERATED>-1-<out-put>"},
         "outputs": ["TOOLS"]},
    ]
    return Toolset("awkward", types=types, tools=tools), plan


# --------------------------------------------------------------------------- the mypy run


@dataclass
class Batch:
    """Compiled modules and what plancheck says about each plan in them."""

    root: Path
    modules: dict[str, CompiledModule] = field(default_factory=dict)  # file name -> module
    # (file, function) -> plancheck's PC301 bindings, or the steps with name errors
    expected_types: dict[tuple[str, str], set[tuple[int, str]]] = field(default_factory=dict)
    expected_names: dict[tuple[str, str], set[int]] = field(default_factory=dict)
    kinds: Counter[str] = field(default_factory=Counter)

    def write(self, name: str, module: CompiledModule) -> None:
        compile(module.source, name, "exec")  # valid Python, or a SyntaxError here
        (self.root / name).write_text(module.source, encoding="utf-8")
        self.modules[name] = module


def _pc301(report: plancheck.Report) -> set[tuple[int, str]]:
    return {(d.data["step"], d.data["key"]) for d in report.diagnostics if d.code == "PC301"}


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Batch, str, float]:
    started = time.perf_counter()
    workspace = tmp_path_factory.mktemp("oracle")
    package = workspace / "compiled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "stubs.py").write_text(compile_toolset(TOOLSET), encoding="utf-8")
    batch = Batch(package)
    rng = random.Random(20240611)
    for number in range(RANDOM_PLANS):
        value = random_plan(rng)
        ill = number % 2 == 1
        while ill and not mistype(rng, value):
            value = random_plan(rng)  # no earlier output of a wrong type: draw another
        report = plancheck.check(value, TOOLSET)
        assert report.plan is not None
        assert bool(_pc301(report)) == ill, json.dumps(value)  # the generator does what it says
        batch.kinds["ill-typed" if ill else "well-typed"] += 1
        batch.kinds["bindings"] += sum(len(s["inputs"]) for s in value)
        batch.kinds["references"] += sum("<GENERATED>" in str(v) for s in value
                                         for v in s["inputs"].values())
        batch.kinds["PC301"] += len(_pc301(report))
        batch.kinds["PC303"] += report.codes.count("PC303")
        name = f"plan_{number:04d}.py"
        batch.write(name, compile_plans([report.plan], TOOLSET, stubs_module=".stubs"))
        batch.expected_types[(name, "run_plan")] = _pc301(report)
    pairs = list(pair_plans())
    functions = [f"pair_{i}" for i in range(len(pairs))]
    batch.write("pairs.py", compile_plans([p[-1] for p in pairs], TOOLSET,
                                          functions=functions, stubs_module=".stubs"))
    for function, (_, output, _, param, _) in zip(functions, pairs, strict=True):
        wrong = not _fits(output, param.type)
        batch.expected_types[("pairs.py", function)] = {(1, param.name)} if wrong else set()
        batch.kinds["pairs"] += 1
        batch.kinds["incompatible pairs"] += wrong
    for number in range(NAME_ERROR_PLANS):
        value = random_plan(rng)
        name_error(rng, value)
        report = plancheck.check(value, TOOLSET)
        assert report.plan is not None
        steps = {d.data["step"] for d in report.diagnostics if d.code in NAME_CODES}
        assert steps, json.dumps(value)
        name = f"names_{number:03d}.py"
        batch.write(name, compile_plans([report.plan], TOOLSET, stubs_module=".stubs"))
        batch.expected_names[(name, "run_plan")] = steps
        batch.expected_types[(name, "run_plan")] = _pc301(report)
    awkward, value = awkward_names()
    report = plancheck.check(value, awkward)
    assert report.plan is not None and report.ok
    batch.write("awkward.py", compile_plans([report.plan], awkward))  # stubs included
    batch.expected_types[("awkward.py", "run_plan")] = set()
    config = workspace / "mypy.ini"
    config.write_text("[mypy]\n")
    compiled_at = time.perf_counter()
    stdout, stderr, _status = mypy_api.run([
        "--config-file", str(config), "--strict", "--python-version", "3.11",
        "--no-incremental", "--cache-dir", str(workspace / ".mypy_cache"),
        "--no-error-summary", "--show-column-numbers", "--hide-error-context",
        str(package),
    ])
    assert not stderr, stderr
    finished = time.perf_counter()
    print(f"\nmypy oracle: {dict(batch.kinds)}; compile {compiled_at - started:.1f} s, "
          f"mypy {finished - compiled_at:.1f} s")
    return batch, stdout, finished - started


def _mypy_errors(batch: Batch, stdout: str) -> Iterator[tuple[str, BindingSite | None, str]]:
    for line in stdout.splitlines():
        if ": note: " in line:
            continue
        match = MYPY_LINE.match(line)
        assert match, f"unexpected mypy output: {line}"
        file = Path(match["file"]).name
        site = batch.modules[file].sites.get(int(match["line"]))
        yield file, site, f"{match['code']}: {match['message']}"


@pytest.mark.slow
def test_mypy_and_plancheck_agree_on_every_binding(oracle: tuple[Batch, str, float]) -> None:
    batch, stdout, seconds = oracle
    rejected: dict[tuple[str, str], set[tuple[int, str]]] = {}
    for file, site, message in _mypy_errors(batch, stdout):
        if file.startswith("names_"):
            continue
        # Every mypy complaint is an arg-type error at a compiled argument: the stubs, the
        # literals and the conversions never make mypy complain elsewhere.
        assert site is not None and site.key is not None, f"{file}: {message}"
        assert message.startswith("arg-type"), f"{file}: {message}"
        rejected.setdefault((file, site.plan), set()).add((site.step, site.key))
    disagreements = {
        plan: (expected, rejected.get(plan, set()))
        for plan, expected in batch.expected_types.items()
        if not plan[0].startswith("names_") and expected != rejected.get(plan, set())
    }
    assert not disagreements, list(disagreements.items())[:5]
    assert batch.kinds["well-typed"] >= 250 and batch.kinds["ill-typed"] >= 250
    assert batch.kinds["well-typed"] + batch.kinds["ill-typed"] >= 500
    assert batch.kinds["PC303"] > 0  # implicit conversions were exercised (and accepted)
    assert 0 < batch.kinds["incompatible pairs"] < batch.kinds["pairs"]
    assert seconds < 60


@pytest.mark.slow  # (the oracle: 560 plans compiled and checked by mypy, 10 s or more)
def test_mypy_reports_name_errors_on_the_same_steps(oracle: tuple[Batch, str, float]) -> None:
    batch, stdout, _ = oracle
    flagged: dict[tuple[str, str], set[int]] = {}
    for file, site, message in _mypy_errors(batch, stdout):
        if file.startswith("names_"):
            assert site is not None, f"{file}: {message}"
            flagged.setdefault((file, site.plan), set()).add(site.step)
    for plan, steps in batch.expected_names.items():
        assert flagged.get(plan, set()) == steps | {s for s, _ in batch.expected_types[plan]}, \
            (plan, batch.modules[plan[0]].source)


# --------------------------------------------------------------------------- the encoding


def test_encoding_is_derived_from_the_lattice() -> None:
    stubs = compile_toolset(TOOLSET)
    assert encoding_gaps(TOOLSET) == []
    # Subtyping mirrors the lattice, several parents included.
    assert "class Raster(SceneEvidence, Array):" in stubs
    # `ThematicMap ~> Imagery`: every input expecting Imagery or a subtype also takes it.
    for tool in TOOLS:
        for param in tool.inputs:
            annotation = re.search(rf"\n    {param.name}: ([^\n=]+?)(?: = None)?,\n",
                                   stubs[stubs.index(f"def {tool.name.replace('-', '_')}("):])
            assert annotation is not None
            takes_maps = TOOLSET.lattice.is_subtype(param.type, "Imagery")
            assert ("ThematicMap" in annotation.group(1).split(" | ")) == (
                takes_maps and param.type != "ThematicMap"), (tool.name, param.name)
            assert annotation.group(1).endswith("| None") == (not param.required)
    # `out generated_image_path: any SatelliteImage` inherits every most specific subtype.
    assert "class AnySatelliteImage(HighResImage, MultispectralImage, SARImage):" in stubs
    assert "    generated_image_path: AnySatelliteImage" in stubs


def test_a_toolset_python_cannot_linearise_is_refused() -> None:
    source = """
    toolset crossed "parents in conflicting orders" {
      type A "a"
      type B "b"
      type X <: A, B "x"
      type Y <: B, A "y"
      type Z <: X, Y "z"
      tool t { in a: Z "" out b: A "" }
    }
    """
    from plancheck.compiler.emit_python import CompileError
    from plancheck.dsl.parser import parse_dsl

    module = parse_dsl(source, "crossed.wf")
    assert not module.diagnostics
    with pytest.raises(CompileError, match="consistent method resolution order"):
        compile_toolset(module.toolsets[0])


@pytest.mark.slow
def test_conversions_and_polymorphic_outputs_in_another_lattice(
        tmp_path: Path) -> None:
    """The encoding is computed from whatever lattice is given, not from the built-in pool."""
    from plancheck.dsl.parser import parse_dsl

    source = """
    toolset tiny "conversions and polymorphism" {
      type Thing "anything"
      type Doc <: Thing "a document"
      type Pdf <: Doc "a pdf"
      type Html <: Doc "an html page"
      type Scan <: Thing ~> Pdf "a scanned page"
      type Photo <: Scan "a photo of a page"
      tool make { in seed: Thing "" out page: any Doc "" }
      tool scan { in page: Thing "" out scan: Photo "" }
      tool read_pdf { in pdf: Pdf "" out text: Thing "" }
      tool read_html { in html: Html "" out text: Thing "" }
    }
    """
    toolset = parse_dsl(source, "tiny.wf").toolsets[0]
    assert encoding_gaps(toolset) == []
    stubs = compile_toolset(toolset)
    assert "pdf: Pdf | Scan," in stubs and "html: Html," in stubs
    assert "class AnyDoc(Pdf, Html):" in stubs
    plan = [
        {"agent": "make", "step": 0, "dependence": [-1], "dependence_content": None,
         "inputs": {"seed": "s.txt"}, "outputs": ["page"]},
        {"agent": "scan", "step": 1, "dependence": [0], "dependence_content": {"0": ["page"]},
         "inputs": {"page": "<GENERATED>-0-<page>"}, "outputs": ["scan"]},
        {"agent": "read_pdf", "step": 2, "dependence": [1], "dependence_content": {"1": ["scan"]},
         "inputs": {"pdf": "<GENERATED>-1-<scan>"}, "outputs": ["text"]},
        {"agent": "read_html", "step": 3, "dependence": [1],
         "dependence_content": {"1": ["scan"]},
         "inputs": {"html": "<GENERATED>-1-<scan>"}, "outputs": ["text"]},
        {"agent": "read_html", "step": 4, "dependence": [0], "dependence_content": {"0": ["page"]},
         "inputs": {"html": "<GENERATED>-0-<page>"}, "outputs": ["text"]},
    ]
    report = plancheck.check(plan, toolset)
    assert report.plan is not None
    assert sorted((d.code, d.data["step"]) for d in report.diagnostics
                  if d.code in ("PC301", "PC303")) == [("PC301", 3), ("PC303", 2)]
    path = tmp_path / "tiny_plan.py"
    module = compile_plans([report.plan], toolset)
    path.write_text(module.source)
    stdout, _, status = mypy_api.run(["--strict", "--no-incremental", "--config-file",
                                      str(_empty_config(tmp_path)), "--cache-dir",
                                      str(tmp_path / ".cache"), "--no-error-summary",
                                      str(path)])
    lines = [int(line.split(":")[1]) for line in stdout.splitlines() if ": error:" in line]
    assert status == 1 and [module.sites[n] for n in lines] == [
        BindingSite("run_plan", 3, "html")], stdout


def test_polymorphic_output_fits_where_a_shared_subtype_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`any T` with a subtype `D <: T, B`: the value may be a D, hence a B. plancheck accepts it
    where B is expected, and so do Python's classes: the encoding has no gap to report."""
    source = """
    toolset gap "a polymorphic output whose subtype has a second parent" {
      type T "t"
      type B "b"
      type D <: T, B "d"
      type E <: T "e"
      tool make { in x: B "" out y: any T "" }
      tool use { in b: B "" out z: B "" }
    }
    """
    path = tmp_path / "gap.wf"
    path.write_text(source)
    toolset = plancheck.load_toolset(path)
    assert encoding_gaps(toolset) == []
    steps = [{"agent": "make", "step": 0, "dependence": [-1], "dependence_content": None,
              "inputs": {"x": "b.txt"}, "outputs": ["y"]},
             {"agent": "use", "step": 1, "dependence": [0], "dependence_content": {"0": ["y"]},
              "inputs": {"b": "<GENERATED>-0-<y>"}, "outputs": ["z"]}]
    assert plancheck.check(steps, toolset).ok
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(steps))
    assert main(["compile", str(plan), "--to", "python", "--tools", str(path)]) == 0
    assert "note:" not in capsys.readouterr().err


def _empty_config(directory: Path) -> Path:
    config = directory / "mypy.ini"
    config.write_text("[mypy]\n")
    return config


# --------------------------------------------------------------------------- the program

GOOD = [
    {"agent": "Weather_Degraded_Image_Restoration", "step": 0, "dependence": [-1],
     "dependence_content": None, "inputs": {"weather_degraded_image_path": "/d/fog.jpg"},
     "outputs": ["restored_image_path"]},
    {"agent": "Crowd_Counting_in_Adverse_Weather", "step": 1, "dependence": [0],
     "dependence_content": {"0": ["restored_image_path"]},
     "inputs": {"image_path": "<GENERATED>-0-<restored_image_path>"},
     "outputs": ["density_map_path", "crowd_count_path"]},
    {"agent": "GeoChat", "step": 2, "dependence": [1],
     "dependence_content": {"1": ["density_map_path"]},
     "inputs": {"image_path": "<GENERATED>-1-<density_map_path>",
                "user_query_path": "/d/question.txt"},
     "outputs": ["contextual_description_path"]},
]


def _plan(value: list[dict[str, Any]], toolset: Toolset = TOOLSET) -> Plan:
    report = plancheck.check(value, toolset)
    assert report.plan is not None
    return report.plan


def _import(path: Path, source: str) -> Any:
    import importlib.util
    import sys

    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses look their module up while being created
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[path.stem]
    return module


def test_compiled_module_runs_once_tools_are_implemented(tmp_path: Path) -> None:
    compiled = _import(tmp_path / "compiled_plan.py", compile_to_python(_plan(GOOD), TOOLSET))
    namespace = vars(compiled)
    with pytest.raises(NotImplementedError, match="Weather_Degraded_Image_Restoration"):
        compiled.run_plan()
    calls: list[tuple[str, dict[str, Any]]] = []

    def tool(name: str, **outputs: str) -> Any:
        def run(**inputs: Any) -> dict[str, str]:
            calls.append((name, inputs))
            return outputs
        return run

    implement = compiled.implement
    implement("Weather_Degraded_Image_Restoration", tool("restore", restored_image_path="r.png"))
    implement("Crowd_Counting_in_Adverse_Weather",
              tool("count", density_map_path="d.png", crowd_count_path="n.json"))
    implement("GeoChat", tool("chat", contextual_description_path="answer.txt"))
    results = compiled.run_plan()
    assert [name for name, _ in calls] == ["restore", "count", "chat"]
    # Literals arrive as values of the parameter's type; results as the declared output types.
    assert calls[0][1] == {"weather_degraded_image_path": namespace["Imagery"]("/d/fog.jpg")}
    assert calls[2][1]["image_path"] == namespace["DensityMap"]("d.png")
    assert str(Path(calls[2][1]["image_path"])) == "d.png"  # values are path-like
    assert results[2].contextual_description_path == namespace["Description"]("answer.txt")
    assert isinstance(results[1].density_map_path, namespace["ThematicMap"])
    with pytest.raises(KeyError, match="no tool"):
        implement("No_Such_Tool", tool("x"))


def test_names_that_are_not_identifiers_are_mangled_readably() -> None:
    plan = [{"agent": "High-Resolution_Image_Reconstructor", "step": 0, "dependence": [-1],
             "dependence_content": None,
             "inputs": {"image_path": "s2.tif", "metadata_path": "m.json"},
             "outputs": ["high_resolution_image_path"]}]
    source = compile_to_python(_plan(plan), TOOLSET, stubs_module="stubs")
    assert "    step_0 = High_Resolution_Image_Reconstructor(\n" in source
    assert '        image_path=MultispectralImage("s2.tif"),\n' in source
    assert "from stubs import (\n" in source
    compile(source, "plan.py", "exec")


def test_awkward_names_compile_to_a_working_module(tmp_path: Path) -> None:
    toolset, value = awkward_names()
    compiled = _import(tmp_path / "awkward_plan.py", compile_to_python(_plan(value, toolset),
                                                                       toolset))
    compiled.implement("1st", lambda: {"x": "x.bin"})
    compiled.implement("my tool", lambda **k: {"out-put": k["class"], "out_put": k["_call"]})
    compiled.implement("object", lambda **k: {"TOOLS": k["in"]})
    results = compiled.run_plan()
    assert vars(results[2]) == {"TOOLS_2": compiled.class_("a\"b'\\c.txt")}
    assert set(compiled.TOOLS) == {"my tool", "object", "1st"}


# --------------------------------------------------------------------------- the CLI


@pytest.mark.slow
def test_cli_compiles_a_clean_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(GOOD))
    out = tmp_path / "plan.py"
    assert main(["compile", str(path), "--to", "python", "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().err
    source = out.read_text()
    assert "def run_plan() -> dict[int, object]:" in source
    stdout, _, status = mypy_api.run(["--strict", "--config-file", str(_empty_config(tmp_path)),
                                      "--cache-dir", str(tmp_path / ".cache"), str(out)])
    assert status == 0, stdout


def test_cli_compiles_an_ill_typed_plan_and_reports_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = json.loads(json.dumps(GOOD))
    plan[1]["inputs"]["image_path"] = "<GENERATED>-0-<restored_image_path>"
    plan[2]["agent"] = "Toponym_Detection"
    plan[2]["inputs"] = {"sentence": "<GENERATED>-1-<density_map_path>"}
    plan[2]["outputs"] = ["detected_toponyms_path"]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    assert main(["compile", str(path), "--to", "python"]) == 1
    captured = capsys.readouterr()
    assert "error[PC301]" in captured.err and "a type checker rejects" in captured.err
    assert "sentence=step_1.density_map_path," in captured.out


@pytest.mark.parametrize(("content", "code"), [
    ('[{"agent": "GeoChat", "step": 0, "dependence": [-1], "dependence_content": null, '
     '"inputs": {"image_path": "<GENERATED>-0"}, "outputs": []}]', "PC205"),
    ('{"not": "a plan"}', "PC105"),
])
def test_cli_refuses_uncompilable_plans(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        content: str, code: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(content)
    out = tmp_path / "plan.py"
    assert main(["compile", str(path), "--to", "python", "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert f"error[{code}]" in captured.err and "not compiled" in captured.err
    assert not out.exists() and captured.out == ""


def test_cli_usage_and_io_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(GOOD))
    assert main(["compile", str(path), "--to", "rust"]) == 2
    assert main(["compile", str(tmp_path / "missing.json"), "--to", "python"]) == 2
    assert main(["compile", str(path), "--to", "python", "-o",
                 str(tmp_path / "no" / "dir" / "x.py")]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "Traceback" not in err


def test_cli_compiles_each_plan_of_a_batch(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    records = [{"task_id": 7, "structured_plan": GOOD},
               {"task_id": 8, "structured_plan": GOOD[:1]}]
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    assert main(["compile", str(path), "--to", "python"]) == 0
    out = capsys.readouterr().out
    assert "def plan_7() -> dict[int, object]:" in out and "def plan_8()" in out
    assert out.count("class Artifact(_Value):") == 1
