"""The GitHub Actions renderer: one workflow command per diagnostic.

    ::error file=plans/a.json,line=22,col=14,endLine=22,endColumn=33,title=PC201 unknown-tool::...

GitHub turns each line of a job's log written this way into an annotation on the pull request.
Info diagnostics become ``notice`` annotations. The escaping follows the Actions runner:
``%``, CR and LF in the message; additionally ``:`` and ``,`` in property values.
"""

from __future__ import annotations

import os

from plancheck.diagnostics.model import Diagnostic, Severity
from plancheck.render.stream import ReportStream

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_command(diagnostic: Diagnostic) -> str:
    properties: list[tuple[str, str]] = []
    if diagnostic.file and diagnostic.file != "<stdin>":
        properties.append(("file", _workspace_path(diagnostic.file)))
        span = diagnostic.span
        if span is not None and span.resolved:
            properties += [("line", str(span.start_line)), ("col", str(span.start_col)),
                           ("endLine", str(span.end_line)),
                           ("endColumn", str(span.end_col))]
    properties.append(("title", f"{diagnostic.code} {diagnostic.name}"))
    body = [diagnostic.message]
    if diagnostic.record:
        body[0] += f" (record {diagnostic.record})"
    body += [f"help: {line}" for line in diagnostic.help]
    body += [f"note: {line}" for line in diagnostic.notes]
    listed = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{COMMAND[diagnostic.severity]} {listed}::{escape_data(chr(10).join(body))}"


def _workspace_path(file: str) -> str:
    """GitHub matches annotation paths against the repository: an absolute path inside the
    working directory (the checkout) is made relative to it."""
    if not os.path.isabs(file):
        return file
    relative = os.path.relpath(file)
    return file if relative.startswith("..") else relative


class GithubStream(ReportStream):
    def plain(self, diagnostic: Diagnostic) -> str:
        return github_command(diagnostic)
