"""The SARIF 2.1.0 renderer (GitHub code scanning, VS Code's SARIF viewer, ...).

One run. ``tool.driver.rules`` lists every registered code (id, name, short and full
description, help, default level, phase); each result carries its rule id and index, a level, the
message, the primary location (physical: file and region; logical: the record and the JSON
pointer of the offending value), secondary labels as related locations, and machine-applicable
suggestions as ``fixes`` when their JSON-pointer edits map onto the file's text (see
:mod:`plancheck.diagnostics.edits`; a fix that cannot be mapped is left out, never guessed).

Regions use ``unicodeCodePoints`` columns (plancheck counts characters, not UTF-16 units), and
``endColumn`` is exclusive, as in plancheck's spans. Artifact URIs are relative to the current
directory (``%SRCROOT%``), which is what code scanning expects when plancheck runs at the root
of the checkout.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from plancheck import __version__
from plancheck.diagnostics.codes import CODES, CodeInfo
from plancheck.diagnostics.model import Diagnostic, Label, Severity, Suggestion
from plancheck.diagnostics.span import Span
from plancheck.render.indented import MANY, dumps_indented
from plancheck.render.registry import RenderContext, Sources
from plancheck.render.stream import ReportStream, Tally, Write

if TYPE_CHECKING:
    from plancheck.diagnostics.positions import LineIndex, Positions

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_NOT_A_FILE = {"", "-", "<stdin>", "<input>", "<unknown>"}


def sarif_document(root: Path, results: list[dict[str, Any]]) -> str:
    """The log as text (``root`` resolved), with the given results."""
    return json.dumps(_log(root, results), indent=2, ensure_ascii=False)


def _log(root: Path, results: list[dict[str, Any]]) -> dict[str, Any]:
    driver: dict[str, Any] = {"name": "plancheck", "version": __version__,
                              "semanticVersion": __version__}
    homepage = information_uri()
    if homepage is not None:
        driver["informationUri"] = homepage
    driver["rules"] = [_rule(info) for info in CODES.values()]
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def information_uri() -> str | None:
    """The project's home page as the installed package declares it (``[project.urls]``).

    Read from the package metadata rather than written here, so that the SARIF log never points
    at an address the project does not own; None when the metadata names none.
    """
    from importlib import metadata

    try:
        meta = metadata.metadata("plancheck")
    except metadata.PackageNotFoundError:
        return None
    urls: dict[str, str] = {}
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = str(entry).partition(",")
        if url.strip():
            urls[label.strip().lower()] = url.strip()
    for label in ("homepage", "repository", "source"):
        if label in urls:
            return urls[label]
    home = [str(h) for h in meta.get_all("Home-page") or [] if h and h != "UNKNOWN"]
    return home[0] if home else None


def _rule(info: CodeInfo) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": info.code,
        "name": _pascal(info.name),
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": info.explanation},
        "help": {
            "text": f"{info.explanation}\n\nRun `plancheck explain {info.code}` for more.",
            "markdown": f"**{info.code} {info.name}**: {info.summary}\n\n{info.explanation}\n\n"
                        f"Run `plancheck explain {info.code}` for more.",
        },
        "defaultConfiguration": {"level": LEVEL[info.severity],
                                 "enabled": info.default_enabled},
        "properties": {"tags": [info.phase, info.name], "phase": info.phase},
    }
    if info.fpof_type:
        rule["properties"]["fpof_type"] = info.fpof_type
        if info.fpof_category:
            rule["properties"]["fpof_category"] = info.fpof_category
    return rule


def _pascal(name: str) -> str:
    # SARIF suggests rule names in PascalCase ("an identifier that is understandable to an
    # end user"); the kebab-case name stays in the tags.
    return "".join(part.capitalize() for part in name.split("-"))


def sarif_result(diagnostic: Diagnostic, context: RenderContext, index: int,
                 root: Path) -> dict[str, Any]:
    message = diagnostic.message
    if diagnostic.help:
        message += "\n" + "\n".join(f"help: {line}" for line in diagnostic.help)
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "ruleIndex": index,
        "level": LEVEL[diagnostic.severity],
        "message": {"text": message},
    }
    primary = diagnostic.primary
    location = _location(diagnostic, primary, root) if primary is not None else None
    if location is None:
        location = _location(diagnostic, None, root)
    if location is not None:
        result["locations"] = [location]
    related: list[dict[str, Any]] = []
    for label in diagnostic.labels:
        if label is primary:
            continue
        found = _location(diagnostic, label, root)
        if found is not None:
            found["id"] = len(related) + 1
            related.append(found)
    if related:
        result["relatedLocations"] = related
    fixes = [fix for s in diagnostic.suggestions if s.machine_applicable
             for fix in [_fix(s, diagnostic, context, root)] if fix is not None]
    if fixes:
        result["fixes"] = fixes
    properties: dict[str, Any] = {"name": diagnostic.name}
    if diagnostic.record is not None:
        properties["record"] = diagnostic.record
    if diagnostic.notes:
        properties["notes"] = list(diagnostic.notes)
    if diagnostic.data:
        from plancheck.diagnostics.serialize import diagnostic_to_dict

        properties["data"] = diagnostic_to_dict(diagnostic)["data"]
    result["properties"] = properties
    return result


def _location(diagnostic: Diagnostic, label: Label | None, root: Path) -> dict[str, Any] | None:
    """A SARIF location for a label (or for the file alone when ``label`` is None)."""
    span = label.span if label is not None else None
    file = (span.file if span is not None and span.file else None) or diagnostic.file
    location: dict[str, Any] = {}
    if file is not None and file not in _NOT_A_FILE:
        physical: dict[str, Any] = {"artifactLocation": _artifact(file, root)}
        if span is not None and span.resolved:
            physical["region"] = _region(span)
        location["physicalLocation"] = physical
    logical: dict[str, Any] = {}
    if diagnostic.record is not None:
        logical["name"] = diagnostic.record
    if span is not None and span.pointer is not None:
        logical["fullyQualifiedName"] = span.pointer
        logical["kind"] = "property" if span.on_key else "value"
    if logical:
        location["logicalLocations"] = [logical]
    if label is not None and label.message:
        location["message"] = {"text": label.message}
    return location or None


def _artifact(file: str, root: Path) -> dict[str, Any]:
    """The artifactLocation of ``file`` (each location names one: worked out once a file)."""
    return dict(_artifact_of(file, root, os.getcwd()))


@lru_cache(maxsize=1024)
def _artifact_of(file: str, root: Path, cwd: str) -> dict[str, Any]:
    path = Path(file)
    absolute = path if path.is_absolute() else Path(cwd) / path
    absolute = Path(os.path.normpath(absolute))
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    # The name as the file system spells it: undecodable bytes are percent-encoded as bytes.
    return {"uri": quote(os.fsencode(relative.as_posix())), "uriBaseId": SRCROOT}


def _region(span: Span) -> dict[str, Any]:
    return {"startLine": span.start_line, "startColumn": span.start_col,
            "endLine": span.end_line, "endColumn": span.end_col}


def _fix(suggestion: Suggestion, diagnostic: Diagnostic, context: RenderContext,
         root: Path) -> dict[str, Any] | None:
    positions = context.sources.positions(diagnostic)
    if positions is None or diagnostic.file in _NOT_A_FILE | {None}:
        return None
    from plancheck.diagnostics.edits import text_edits

    edits = text_edits(suggestion.edits, positions)
    if edits is None:
        return None
    lines = positions.lines
    replacements = []
    for edit in edits:
        start_line, start_col = lines.position(edit.start)
        end_line, end_col = lines.position(edit.end)
        replacements.append({
            "deletedRegion": {"startLine": start_line, "startColumn": start_col,
                              "endLine": end_line, "endColumn": end_col},
            "insertedContent": {"text": edit.text},
        })
    assert diagnostic.file is not None
    return {
        "description": {"text": suggestion.message},
        "artifactChanges": [{"artifactLocation": _artifact(diagnostic.file, root),
                             "replacements": replacements}],
    }


class SarifStream(ReportStream):
    """The SARIF log: the results are the last member of its one run, so everything before
    them is written first and each result as soon as it is known."""

    _INDENT = " " * 8  # a result's depth: log > runs > run > results

    def __init__(self, write: Write, *, quiet: bool = False, colour: bool = False) -> None:
        super().__init__(write, quiet=quiet, colour=colour)
        self.root = Path.cwd().resolve()
        self.rule_index = {code: index for index, code in enumerate(CODES)}
        self._head, self._tail = sarif_document(self.root, []).rsplit('"results": []', 1)
        self._items = 0

    def report(self, diagnostics: Sequence[Diagnostic], lines: LineIndex | None,
               positions: Positions | None) -> None:
        sources = Sources()  # this plan's alone: what its fixes map onto
        for diagnostic in diagnostics:
            if diagnostic.file is not None:
                sources.add(diagnostic.file, diagnostic.record, lines, positions)
        context = RenderContext(diagnostics, sources)
        for diagnostic in diagnostics:
            result = dumps_indented(sarif_result(diagnostic, context,
                                                 self.rule_index[diagnostic.code], self.root),
                                    many=self._items >= MANY)
            self.write((",\n" if self._items else self._head + '"results": [\n')
                       + self._INDENT + result.replace("\n", "\n" + self._INDENT))
            self._items += 1

    def loose(self, diagnostics: Sequence[Diagnostic]) -> None:
        # Diagnostics without a source get no fixes: an empty source for each.
        for diagnostic in diagnostics:
            self.report([diagnostic], None, None)

    def finish(self, tally: Tally) -> None:
        if self._items:
            self.line("\n      ]" + self._tail)
        else:
            self.line(self._head + '"results": []' + self._tail)
