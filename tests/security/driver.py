"""Run one plancheck entry point under an audit hook (issue 33's tests run it in a child).

    python driver.py LOG cli ARG...        # plancheck.cli.main(ARGS)
    python driver.py LOG guard POLICY      # plancheck.Guard(policies=POLICY) and one call

Every ``open`` of a path and every class a pickle looks up (``pickle.find_class``: any unpickling
that builds an object) is written to LOG as JSON lines, so a test can prove which names a run
read and that nothing was unpickled.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def main() -> int:
    log_path, kind, *args = sys.argv[1:]
    events: list[list[str]] = []

    def hook(event: str, arguments: tuple[Any, ...]) -> None:
        if event == "pickle.find_class":
            events.append([event, ".".join(map(str, arguments))])
        elif event == "open" and isinstance(arguments[0], str | bytes | os.PathLike):
            events.append([event, os.fsdecode(arguments[0])])

    sys.addaudithook(hook)
    try:
        if kind == "cli":
            from plancheck.cli import main as cli

            try:
                code = cli(args)
            except SystemExit as done:
                code = done.code if isinstance(done.code, int) else 2
        else:
            import plancheck

            guard = plancheck.Guard(policies=args[0])
            verdict = guard.propose({"name": "GeoChat", "arguments": {}})
            print(getattr(verdict, "allowed", None))
            code = 0
    finally:
        seen = list(events)
        with open(log_path, "w", encoding="utf-8") as log:
            log.writelines(json.dumps(event) + "\n" for event in seen)
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
