"""PNG plots of a report: EM by workflow depth (the paper's Figure 2) and the FPoF
distribution by method (Table 3 as bars). matplotlib is an optional extra
(``pip install 'plancheck[plot]'``) and is imported only here, only when plotting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plancheck.scoring.bootstrap import Estimate
from plancheck.scoring.report import SUBCATEGORY_MARK, Table

__all__ = ["PlotError", "write_plots"]


class PlotError(Exception):
    """Plots cannot be drawn (matplotlib missing, or the directory cannot be written)."""


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotError("plots need matplotlib: pip install 'plancheck[plot]'") from None
    return plt


def write_plots(tables: list[Table], directory: str | Path) -> list[Path]:
    """Write ``depth.png`` and ``fpof.png`` for the tables present; returns the files."""
    plt = _pyplot()
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise PlotError(f"cannot create {out}: {error}") from None
    written = []
    by_name = {table.name: table for table in tables}
    if "depth" in by_name:
        written.append(_depth_plot(plt, by_name["depth"], out / "depth.png"))
    if "fpof" in by_name:
        written.append(_fpof_plot(plt, by_name["fpof"], out / "fpof.png"))
    return written


def _save(plt: Any, figure: Any, path: Path) -> Path:
    try:
        figure.savefig(path, dpi=120, bbox_inches="tight")
    except OSError as error:
        raise PlotError(f"cannot write {path}: {error}") from None
    finally:
        plt.close(figure)
    return path


def _depth_plot(plt: Any, table: Table, path: Path) -> Path:
    figure, axes = plt.subplots(figsize=(6, 4))
    methods = table.columns[1:-1]  # between "Depth" and "n"
    labels = [str(row[0]) for row in table.rows]
    for column, method in enumerate(methods, start=1):
        xs, ys, low, high = [], [], [], []
        for x, row in enumerate(table.rows):
            cell = row[column]
            if isinstance(cell, Estimate) and cell.value is not None:
                xs.append(x)
                ys.append(cell.value * 100)
                low.append((cell.value - (cell.low if cell.low is not None else cell.value)) * 100)
                high.append(
                    ((cell.high if cell.high is not None else cell.value) - cell.value) * 100
                )
        if xs:
            axes.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=method)
    axes.set_xticks(range(len(labels)), labels)
    axes.set_xlabel("Workflow depth (steps in the gold plan)")
    axes.set_ylabel("Exact match (%)")
    axes.set_ylim(0, 100)
    axes.set_title("Exact match by workflow depth")
    axes.grid(alpha=0.3)
    axes.legend()
    return _save(plt, figure, path)


def _fpof_plot(plt: Any, table: Table, path: Path) -> Path:
    figure, axes = plt.subplots(figsize=(7, 4))
    methods = table.columns[1:]
    kinds = [row for row in table.rows if _is_sub(row)]
    categories = [
        row
        for row in table.rows
        if isinstance(row[0], str)
        and not _is_sub(row)
        and any(isinstance(c, Estimate) for c in row[1:])
    ]
    # Bars stacked by fine type; single-type categories (Tool Mismatch) stack as themselves.
    segments = [row for row in categories if not _has_children(table.rows, row)] + kinds
    bottoms = [0.0] * len(methods)
    for row in segments:
        heights = [(c.value or 0.0) * 100 if isinstance(c, Estimate) else 0.0 for c in row[1:]]
        axes.bar(methods, heights, bottom=bottoms, label=str(row[0]).removeprefix(SUBCATEGORY_MARK))
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    axes.set_ylabel("% of the method's failures")
    axes.set_ylim(0, 100)
    axes.set_title("First point of failure by planning method")
    axes.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _save(plt, figure, path)


def _is_sub(row: list[Any]) -> bool:
    return isinstance(row[0], str) and row[0].startswith(SUBCATEGORY_MARK)


def _has_children(rows: list[list[Any]], row: list[Any]) -> bool:
    index = next(i for i, candidate in enumerate(rows) if candidate is row)
    return index + 1 < len(rows) and _is_sub(rows[index + 1])
