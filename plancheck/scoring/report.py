"""The paper's tables from per-item score files, and the ``plancheck score`` summary.

Results are laid out as ``RESULTS_DIR/<model>/<method>/per_item.jsonl`` (next to the
``predictions.jsonl`` the planner runner writes there), one line per prediction as
``plancheck score --per-item`` writes it. From them :func:`build_tables` computes:

* ``em`` - exact match by model x method (the paper's Table 2);
* ``fpof`` - the First-Point-of-Failure distribution by method, as a share of the method's
  failures, by category with sub-categories (Table 3);
* ``tool_vs_em`` - Tool Accuracy (A) against EM and their difference, the semantic-execution
  gap, per model and method, with parameter/dependency accuracy and execution equivalence
  (Table 17); ``gap_by_method`` - the gap averaged over models per method (Section 4.3);
* ``depth`` - EM by workflow depth (the gold plan's number of steps), micro-averaged over
  models, per method (Figure 2); ``composition`` - EM for Node / Chain / Branching tasks.

Depth and composition need the gold plans (``--gold``). Every rate carries a bootstrap 95%
interval. Tables render as text, Markdown, LaTeX, CSV (one tidy table) or JSON.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from plancheck.diagnostics.codes import FPOF_CATEGORY
from plancheck.fileio import is_dir, is_file
from plancheck.scoring.bootstrap import DEFAULT_RESAMPLES, Estimate, estimate_rate
from plancheck.scoring.fpof import fpof_category
from plancheck.scoring.gold import COMPOSITIONS, GoldIndex

__all__ = [
    "FORMATS",
    "TABLES",
    "ReportError",
    "Results",
    "Table",
    "build_tables",
    "load_results",
    "render_score_summary",
    "render_tables",
]

PER_ITEM_NAME: Final = "per_item.jsonl"
FORMATS: Final = ("text", "markdown", "latex", "csv", "json")
TABLES: Final = ("em", "fpof", "tool_vs_em", "gap_by_method", "depth", "composition")
METHOD_ORDER: Final = ("dp", "cot", "tot", "rap", "react")
METHOD_NAMES: Final = {"dp": "DP", "cot": "CoT", "tot": "ToT", "rap": "RAP", "react": "ReAct"}
# Table 3's rows: each category, then its fine types (the paper's sub-categories).
FPOF_ROWS: Final = (
    ("Tool Mismatch", ("agent_mismatch",)),
    (
        "Parameter Binding Error",
        ("parameter_error", "dependency_error", "dependency_content_error"),
    ),
    (
        "Structural Error",
        ("hallucinated_extra_steps", "early_stop", "format_error", "empty_output", "exception"),
    ),
)
SUBCATEGORY_MARK: Final = "-- "  # tabulate strips leading blanks; "--" is an en dash in LaTeX
FPOF_NAMES: Final = {
    "agent_mismatch": "Tool Mismatch",
    "parameter_error": "Parameter Error",
    "dependency_error": "Dependency Error",
    "dependency_content_error": "Dependency Content Error",
    "hallucinated_extra_steps": "Hallucinated Steps",
    "early_stop": "Early Stop",
    "format_error": "Format Error",
    "empty_output": "Empty Output",
    "exception": "Evaluator Crash",
}


class ReportError(Exception):
    """The results cannot be reported (nothing found, unreadable)."""


# --------------------------------------------------------------------------- accumulation


@dataclass(slots=True)
class Tally:
    """Counts of one group of items (a model x method run, a depth, ...)."""

    n: int = 0
    em: int = 0
    tool_acc: int = 0
    param_acc: int = 0
    dep_acc: int = 0
    exec_equiv: int = 0
    exec_n: int = 0  # items with exec_equiv computed (`plancheck score --parity-only`: null)
    fpof: Counter[str] = field(default_factory=Counter)

    def add(self, item: dict[str, Any]) -> None:
        self.n += 1
        self.em += item.get("em") is True
        self.tool_acc += item.get("tool_acc") is True
        self.param_acc += item.get("param_acc") is True
        self.dep_acc += item.get("dep_acc") is True
        self.exec_equiv += item.get("exec_equiv") is True
        self.exec_n += isinstance(item.get("exec_equiv"), bool)
        kind = item.get("fpof_type")
        if isinstance(kind, str):
            self.fpof[kind] += 1

    def merge(self, other: Tally) -> None:
        self.n += other.n
        self.em += other.em
        self.tool_acc += other.tool_acc
        self.param_acc += other.param_acc
        self.dep_acc += other.dep_acc
        self.exec_equiv += other.exec_equiv
        self.exec_n += other.exec_n
        self.fpof.update(other.fpof)


@dataclass(slots=True)
class Results:
    """Tallies per (model, method), and per depth / composition within each."""

    runs: dict[tuple[str, str], Tally] = field(default_factory=dict)
    depth: dict[tuple[str, str, int], Tally] = field(default_factory=dict)
    composition: dict[tuple[str, str, str], Tally] = field(default_factory=dict)
    skipped_lines: int = 0
    unknown_tasks: int = 0
    has_gold: bool = False
    unusable: list[str] = field(default_factory=list)  # "file:line: why", lines left out
    unknown_fpof: Counter[str] = field(default_factory=Counter)  # counted as Structural Error

    @property
    def models(self) -> list[str]:
        return sorted({model for model, _ in self.runs})

    @property
    def methods(self) -> list[str]:
        found = {method for _, method in self.runs}
        known = [m for m in METHOD_ORDER if m in found]
        return known + sorted(found - set(known))


def _one_file(path: Path) -> tuple[str, str, Path]:
    """The model and method of a per-item file named on its own."""
    if path.name == PER_ITEM_NAME and path.parent.parent != path.parent:
        return path.parent.parent.name or path.stem, path.parent.name, path
    return path.stem, "-", path


def per_item_files(results_dir: Path) -> Iterator[tuple[str, str, Path]]:
    """``(model, method, path)`` of every ``<model>/<method>/per_item.jsonl``. A directory
    that cannot be read is a :class:`ReportError` (``Path.glob`` would skip it in silence and
    the tables would lack its runs)."""
    import os

    def listing(directory: Path) -> list[str]:
        try:
            return sorted(os.listdir(directory))
        except OSError as error:
            raise ReportError(f"cannot read {directory}: {error.strerror or error}") from None

    for model in listing(results_dir):
        if model.startswith(".") or not is_dir(results_dir / model):
            continue
        for method in listing(results_dir / model):
            path = results_dir / model / method / PER_ITEM_NAME
            if not method.startswith(".") and is_dir(path.parent) and is_file(path):
                yield model, method, path


def load_results(results_dir: str | Path, gold: GoldIndex | None = None) -> Results:
    """Read every per-item file under ``results_dir`` (streaming, line by line), or the one
    per-item file ``results_dir`` names (its run named by the file: ``items.jsonl`` is the
    model ``items``; ``<model>/<method>/per_item.jsonl`` by its directories)."""
    root = Path(results_dir)
    if is_file(root):
        files = [_one_file(root)]
    elif not is_dir(root):
        raise ReportError(f"{root} is neither a per-item file nor a directory of them")
    else:
        files = list(per_item_files(root))
    results = Results(has_gold=gold is not None)
    if not files:
        raise ReportError(
            f"no {PER_ITEM_NAME} files under {root} (expected <model>/<method>/{PER_ITEM_NAME}; "
            "write them with `plancheck score --gold BENCHMARK <model>/<method>/predictions.jsonl "
            f"--per-item <model>/<method>/{PER_ITEM_NAME}`)"
        )
    for model, method, path in files:
        run = results.runs.setdefault((model, method), Tally())
        try:
            with path.open(encoding="utf-8") as lines:
                for number, line in enumerate(lines, 1):
                    if not line.strip():
                        continue
                    try:
                        item = json.loads(line)
                    except (ValueError, RecursionError):
                        results.skipped_lines += 1
                        continue
                    if not isinstance(item, dict):
                        results.skipped_lines += 1
                        continue
                    problem = _unusable_item(item)
                    if problem is not None:  # e.g. "em": "yes", which would count as a miss
                        results.unusable.append(f"{path}:{number}: {problem}")
                        continue
                    kind = item.get("fpof_type")
                    if isinstance(kind, str) and kind not in KNOWN_FPOF_TYPES:
                        results.unknown_fpof[kind] += 1
                    run.add(item)
                    if gold is not None:
                        _add_by_task(results, model, method, item, gold)
        except (OSError, UnicodeDecodeError) as error:
            raise ReportError(f"cannot read {path}: {error}") from None
    return results


_FLAGS: Final = ("em", "tool_acc", "param_acc", "dep_acc", "exec_equiv")
KNOWN_FPOF_TYPES: Final = frozenset({*FPOF_CATEGORY, "exception"})


def _unusable_item(item: dict[str, Any]) -> str | None:
    """Why a per-item line cannot be counted (None: it can): a verdict that is neither true,
    false nor null, or an FPoF type that is not a string."""
    for name in _FLAGS:
        value = item.get(name)
        if value is not None and not isinstance(value, bool):
            return f"`{name}` is {json.dumps(value)[:40]}, not true, false or null"
    kind = item.get("fpof_type")
    if kind is not None and not isinstance(kind, str):
        return f"`fpof_type` is {json.dumps(kind)[:40]}, not a string or null"
    return None


def _add_by_task(
    results: Results, model: str, method: str, item: dict[str, Any], gold: GoldIndex
) -> None:
    task = gold.get(item.get("task_id")) if gold.single is None else None
    if task is None:
        results.unknown_tasks += 1
        return
    results.depth.setdefault((model, method, task.depth), Tally()).add(item)
    results.composition.setdefault((model, method, task.composition), Tally()).add(item)


# --------------------------------------------------------------------------- tables


@dataclass(slots=True)
class Table:
    """A table: ``rows`` hold strings (labels) and :class:`Estimate` cells (rates)."""

    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)
    best_per_row: bool = False  # highlight each row's best rate (Markdown, LaTeX)


@dataclass(frozen=True, slots=True)
class _Settings:
    resamples: int
    seed: int

    def rate(self, k: int, n: int, name: str) -> Estimate:
        # The random stream is keyed by the metric alone (never by a model, method or path), so
        # the same counts give the same interval here and in `plancheck score`.
        return estimate_rate(k, n, resamples=self.resamples, seed=self.seed, name=name)


def _method_name(method: str) -> str:
    return METHOD_NAMES.get(method.lower(), method)


def build_tables(
    results: Results,
    *,
    names: tuple[str, ...] = TABLES,
    depth_cap: int = 4,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[Table]:
    """The requested tables (depth and composition only when gold plans were given)."""
    settings = _Settings(resamples, seed)
    builders = {
        "em": _em_table,
        "fpof": _fpof_table,
        "tool_vs_em": _tool_vs_em_table,
        "gap_by_method": _gap_table,
        "depth": lambda r, s: _depth_table(r, s, depth_cap),
        "composition": _composition_table,
    }
    tables = []
    for name in names:
        if name in ("depth", "composition") and not results.has_gold:
            continue
        tables.append(builders[name](results, settings))
    return tables


def _em_table(results: Results, s: _Settings) -> Table:
    methods = results.methods
    rows = []
    for model in results.models:
        row: list[Any] = [model]
        for method in methods:
            run = results.runs.get((model, method))
            row.append(s.rate(run.em, run.n, "em") if run else None)
        rows.append(row)
    return Table(
        "em",
        "Exact match (%) by model and planning method (Table 2)",
        ["Model", *map(_method_name, methods)],
        rows,
        best_per_row=True,
    )


def _pooled(results: Results, method: str) -> Tally:
    total = Tally()
    for (_, run_method), run in results.runs.items():
        if run_method == method:
            total.merge(run)
    return total


def _fpof_table(results: Results, s: _Settings) -> Table:
    methods = results.methods
    pooled = {method: _pooled(results, method) for method in methods}
    failures = {method: sum(t.fpof.values()) for method, t in pooled.items()}
    seen = Counter[str]()
    for tally in pooled.values():
        seen.update(tally.fpof)
    rows: list[list[Any]] = []
    for category, kinds in FPOF_ROWS:
        rows.append(
            [
                category,
                *(
                    s.rate(
                        sum(pooled[m].fpof[k] for k in kinds), failures[m], f"cat:{category}"
                    )
                    for m in methods
                ),
            ]
        )
        if len(kinds) > 1:
            for kind in kinds:
                if kind == "exception" and not seen[kind]:
                    continue
                rows.append(
                    [
                        f"{SUBCATEGORY_MARK}{FPOF_NAMES[kind]}",
                        *(
                            s.rate(pooled[m].fpof[kind], failures[m], f"fpof:{kind}")
                            for m in methods
                        ),
                    ]
                )
    rows.append(["Failures (count)", *(str(failures[m]) for m in methods)])
    other = sorted(set(seen) - {k for _, kinds in FPOF_ROWS for k in kinds})
    notes = ["% of each method's failures, pooled over models; sub-categories marked --"]
    if other:
        notes.append("types outside the taxonomy: " + ", ".join(other))
    return Table(
        "fpof",
        "First-Point-of-Failure distribution by planning method (Table 3)",
        ["FPoF", *map(_method_name, methods)],
        rows,
        notes,
    )


def _tool_vs_em_table(results: Results, s: _Settings) -> Table:
    rows: list[list[Any]] = []
    for model in results.models:
        for method in results.methods:
            run = results.runs.get((model, method))
            if run is None:
                continue
            rows.append(
                [
                    model,
                    _method_name(method),
                    s.rate(run.tool_acc, run.n, "tool_acc"),
                    s.rate(run.em, run.n, "em"),
                    s.rate(run.tool_acc - run.em, run.n, "gap"),
                    s.rate(run.param_acc, run.n, "param_acc"),
                    s.rate(run.dep_acc, run.n, "dep_acc"),
                    s.rate(run.exec_equiv, run.exec_n, "exec_equiv"),
                    run.n,
                ]
            )
    return Table(
        "tool_vs_em",
        "Tool Accuracy (A) vs exact match and the semantic-execution gap (Table 17)",
        ["Model", "Method", "A", "EM", "Gap (A-EM)", "Param", "Dep", "Exec-equiv", "n"],
        rows,
        [
            "Gap = share of tasks with the right tools but no exact match (EM "
            "implies A, so it is A - EM); Exec-equiv: same workflow as the gold plan "
            "under the symbolic interpreter"
        ],
    )


def _gap_table(results: Results, s: _Settings) -> Table:
    rows: list[list[Any]] = []
    for method in results.methods:
        gaps = [
            (run.tool_acc - run.em) / run.n
            for (_, m), run in results.runs.items()
            if m == method and run.n
        ]
        pooled = _pooled(results, method)
        mean = sum(gaps) / len(gaps) if gaps else None
        rows.append(
            [
                _method_name(method),
                Estimate(mean, None, None, len(gaps)) if mean is not None else None,
                s.rate(pooled.tool_acc - pooled.em, pooled.n, "gap"),
                str(len(gaps)),
            ]
        )
    return Table(
        "gap_by_method",
        "Semantic-execution gap by method (Section 4.3), pp",
        ["Method", "Mean gap over models", "Pooled gap", "Models"],
        rows,
    )


def _depth_label(depth: int, cap: int) -> str:
    return f"{cap}+" if depth >= cap else str(depth)


def _depth_table(results: Results, s: _Settings, cap: int) -> Table:
    methods = results.methods
    cells: dict[tuple[str, str], Tally] = {}
    depths: set[int] = set()
    for (_, method, depth), tally in results.depth.items():
        bucket = min(depth, cap)
        depths.add(bucket)
        cells.setdefault((_depth_label(bucket, cap), method), Tally()).merge(tally)
    rows: list[list[Any]] = []
    for depth in sorted(depths):
        label = _depth_label(depth, cap)
        row: list[Any] = [label]
        tasks = 0
        for method in methods:
            cell = cells.get((label, method))
            row.append(s.rate(cell.em, cell.n, "em") if cell else None)
            tasks += cell.n if cell else 0
        rows.append([*row, tasks])
    notes = ["depth = number of steps of the gold plan; EM micro-averaged over models"]
    if results.unknown_tasks:
        notes.append(f"{results.unknown_tasks} items name no task of the gold file")
    return Table(
        "depth",
        "Exact match (%) by workflow depth (Figure 2)",
        ["Depth", *map(_method_name, methods), "n"],
        rows,
        notes,
    )


def _composition_table(results: Results, s: _Settings) -> Table:
    methods = results.methods
    rows: list[list[Any]] = []
    for composition in COMPOSITIONS:
        row: list[Any] = [composition]
        count = 0
        for method in methods:
            tally = Tally()
            for (_, m, c), part in results.composition.items():
                if m == method and c == composition:
                    tally.merge(part)
            count += tally.n
            row.append(
                s.rate(tally.em, tally.n, "em") if tally.n else None
            )
        rows.append([*row, count])
    return Table(
        "composition",
        "Exact match (%) by composition",
        ["Composition", *map(_method_name, methods), "n"],
        rows,
        ["Node: one step; Branching: a step feeds two or more steps; Chain: the rest"],
    )


# --------------------------------------------------------------------------- rendering


def _best(row: list[Any]) -> float | None:
    values = [c.value for c in row if isinstance(c, Estimate) and c.value is not None]
    return max(values) if values else None


_LATEX_SPECIAL: Final = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def markdown_escape(text: str) -> str:
    """A table cell's text: a `|` (a model named `a|b`) would split the cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|")


def _cell(cell: Any, *, ci: bool, fmt: str, best: float | None = None) -> str:
    if cell is None:
        return "-"
    if isinstance(cell, str) and fmt == "latex":
        return latex_escape(cell)
    if isinstance(cell, str) and fmt == "markdown":
        return markdown_escape(cell)
    if isinstance(cell, Estimate):
        text = cell.format(100.0, 2 if fmt == "latex" else 1, ci=ci)
        if best is not None and cell.value == best:
            if fmt == "markdown":
                return f"**{text}**"
            if fmt == "latex":
                return f"\\textbf{{{text}}}"
        return text
    return str(cell)


def _grid(table: Table, *, ci: bool, fmt: str) -> list[list[str]]:
    grid = []
    for row in table.rows:
        best = _best(row) if table.best_per_row and fmt in ("markdown", "latex") else None
        grid.append([_cell(c, ci=ci, fmt=fmt, best=best) for c in row])
    return grid


def _alignment(table: Table) -> list[str]:
    """Numbers right-aligned (a column of estimates and counts), words left-aligned."""
    aligned = []
    for column in range(len(table.columns)):
        cells = [row[column] for row in table.rows if column < len(row)]
        numeric = any(c is not None for c in cells) and all(
            c is None or isinstance(c, (Estimate, int, float)) for c in cells)
        aligned.append("right" if numeric else "left")
    return aligned


def render_tables(tables: list[Table], fmt: str = "text", *, ci: bool = False) -> str:
    """All tables in one format."""
    if fmt == "json":
        return json.dumps(
            {"schema_version": 1, "tables": [_table_to_dict(t) for t in tables]}, indent=2
        )
    if fmt == "csv":
        return _tables_to_csv(tables)
    from tabulate import tabulate

    style = {"text": "simple", "markdown": "github", "latex": "latex_raw"}[fmt]
    parts = []
    for table in tables:
        headers = ([latex_escape(c) for c in table.columns] if fmt == "latex" else
                   [markdown_escape(c) for c in table.columns] if fmt == "markdown"
                   else table.columns)
        body = tabulate(
            _grid(table, ci=ci, fmt=fmt), headers=headers, tablefmt=style, disable_numparse=True,
            colalign=_alignment(table),
        )
        if fmt == "markdown":
            notes = "".join(f"\n\n_{note}_" for note in table.notes)
            parts.append(f"### {table.title}\n\n{body}{notes}")
        elif fmt == "latex":
            caption = latex_escape(table.title)
            parts.append(
                "\\begin{table}[t]\n\\centering\n"
                f"\\caption{{{caption}}}\n\\label{{tab:{table.name}}}\n"
                f"{body}\n\\end{{table}}"
            )
        else:
            notes = "".join(f"\n  {note}" for note in table.notes)
            parts.append(f"{table.title}\n\n{body}{notes}")
    return "\n\n".join(parts) + "\n"


def _table_to_dict(table: Table) -> dict[str, Any]:
    rows = []
    for row in table.rows:
        rows.append(
            {
                column: (
                    cell.to_dict(scale=100.0, digits=2) if isinstance(cell, Estimate) else cell
                )
                for column, cell in zip(table.columns, row, strict=False)
            }
        )
    return {
        "name": table.name,
        "title": table.title,
        "columns": table.columns,
        "rows": rows,
        "notes": table.notes,
    }


def _tables_to_csv(tables: list[Table]) -> str:
    """One tidy CSV: a line per cell, with its table, row, column, value and interval."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["table", "row", "column", "value", "ci_low", "ci_high", "n"])
    for table in tables:
        labels = 2 if table.name == "tool_vs_em" else 1
        for row in table.rows:
            label = " / ".join(str(cell).strip() for cell in row[:labels])
            for column, cell in zip(table.columns[labels:], row[labels:], strict=False):
                if isinstance(cell, Estimate):
                    shown = cell.to_dict(scale=100.0, digits=2)
                    writer.writerow(
                        [
                            table.name,
                            label,
                            column,
                            shown["value"],
                            shown["ci_low"],
                            shown["ci_high"],
                            cell.n,
                        ]
                    )
                elif cell is not None:
                    writer.writerow([table.name, label, column, cell, "", "", ""])
    return out.getvalue()


# --------------------------------------------------------------------------- score summary


def render_score_summary(document: dict[str, Any], *, ci: bool = True) -> str:
    """The text summary ``plancheck score`` prints for one summary document."""
    from tabulate import tabulate

    def shown(entry: dict[str, Any] | None) -> str:
        if not entry or entry.get("value") is None:
            return "-"
        text = f"{entry['value'] * 100:.1f}"
        if ci and entry.get("ci_low") is not None:
            text += f" [{entry['ci_low'] * 100:.1f}, {entry['ci_high'] * 100:.1f}]"
        return text

    labels = {
        "em": "Exact match (EM)",
        "tool_acc": "Tool accuracy",
        "param_acc": "Parameter accuracy",
        "dep_acc": "Dependency accuracy",
        "exec_equiv": "Execution-equivalent",
        "gap": "Semantic-execution gap (Tool - EM)",
    }
    metrics = document["metrics"]
    rows = [[labels[name], shown(metrics[name])] for name in labels]
    static = document.get("static")
    if static:
        rows.append(["Statically valid (no gold)", shown(static["valid"])])
    for name, entry in document.get("taskbench", {}).items():
        rows.append([f"TaskBench {name.replace('_', ' ')}", shown(entry)])
    for name, entry in document.get("trajectory", {}).items():
        rows.append([f"DORA {name.replace('_', ' ')}", shown(entry)])
    interval = " [95% CI]" if ci else ""
    head = (
        f"{document['name']}: {document['predictions']} predictions scored"
        f" ({document['malformed']} malformed, {document['unmatched']} without a gold plan"
        + (
            f", {document['missing_tasks']} gold tasks without a prediction"
            if "missing_tasks" in document
            else ""
        )
        + ")"
    )
    parts = [
        head,
        "",
        tabulate(
            rows, headers=["Metric", f"%{interval}"], tablefmt="simple", disable_numparse=True
        ),
    ]
    fpof = document["fpof"]
    if fpof["failures"]:
        fpof_rows = [
            [FPOF_NAMES.get(kind, kind), fpof_category(kind), entry["count"], shown(entry)]
            for kind, entry in fpof["types"].items()
        ]
        parts += [
            "",
            tabulate(
                fpof_rows,
                headers=["First point of failure", "Category", "n", f"% of failures{interval}"],
                tablefmt="simple",
                disable_numparse=True,
            ),
        ]
    if static and static["lint_rates"]:
        from plancheck.diagnostics.codes import CODES

        lint = sorted(static["lint_rates"].items(), key=lambda kv: -kv[1]["count"])
        lint_rows = [
            [code, CODES[code].name if code in CODES else "?", entry["count"], shown(entry)]
            for code, entry in lint
        ]
        parts += [
            "",
            tabulate(
                lint_rows,
                headers=["Code", "Name", "n", f"% of predictions{interval}"],
                tablefmt="simple",
                disable_numparse=True,
            ),
        ]
    return "\n".join(parts) + "\n"
