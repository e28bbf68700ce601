"""The JSON Lines renderer: one diagnostic object per line, nothing else.

Each line is ``render_json.diagnostic_to_dict`` of one diagnostic, so a consumer of ``--format
json`` reads the same fields; there is no summary line (count the lines), and no output at all
when there is nothing to report.
"""

from __future__ import annotations

import json

from plancheck.diagnostics.model import Diagnostic
from plancheck.diagnostics.serialize import diagnostic_to_dict
from plancheck.render.stream import ReportStream


class JsonlStream(ReportStream):
    def plain(self, diagnostic: Diagnostic) -> str:
        return json.dumps(diagnostic_to_dict(diagnostic), ensure_ascii=False)
