"""The ``plancheck`` command line.

``plancheck FILE...`` is ``plancheck check FILE...``. Exit codes: 0 when nothing reaches the
fail level, 1 when something does, 2 for usage, I/O or internal errors. No input makes it print
a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Callable, Sequence

from plancheck import TYPE_CHECKING, __version__

if TYPE_CHECKING:  # typing is not imported at run time: see plancheck/__init__.py
    from typing import Any

Command = Callable[[argparse.Namespace], int]

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """A problem with how plancheck was called (exit 2)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: handled as Ctrl-C is (whatever a command keeps on Ctrl-C, a
    ``.partial`` file, it keeps; temporaries and locks are removed), exit 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, _frame: object) -> None:
    raise Terminated(signum)


def _stop_on_signals() -> None:
    """SIGTERM and SIGHUP raise :class:`Terminated` in the main thread, as SIGINT raises
    KeyboardInterrupt: by default they would kill the process where it stands, leaving its
    temporary files and locks behind and its finished work unsaved. A signal the parent made
    the process ignore (``nohup``) stays ignored."""
    import signal

    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) == signal.SIG_DFL:
            signal.signal(number, _terminate)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil (and the compression
    modules it imports): argparse asks for the width whenever a parser gets an option, so every
    run of every command would pay for that import."""
    with contextlib.suppress(KeyError, ValueError):
        columns = int(os.environ["COLUMNS"])
        if columns > 0:
            return columns
    if sys.__stdout__ is None:
        return 80
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 80
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        # Text of several lines (the examples and exit statuses after the options) is laid
        # out by hand; a one-line description is wrapped to the terminal.
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class _Parser(argparse.ArgumentParser):
    _intermixing = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)  # subparsers are made by this class
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            hints = [hint for word in message[len(prefix):].split()
                     if (hint := self._neighbour(word)) is not None]
            if hints:
                message += "; did you mean " + ", ".join(hints) + "?"
        raise UsageError(message)

    def _neighbour(self, word: str) -> str | None:
        """What an unknown option was likely meant to be: a command written as an option
        (``check --fix``: ``plancheck fix``), or a near option of this command."""
        if not word.startswith("--"):
            return None
        name = word[2:].split("=", 1)[0]
        if name == "explain" and self.prog != "plancheck check":
            return "`plancheck check --explain`"  # `plancheck explain` describes codes
        if name in SUBCOMMANDS and name != "explain":
            return f"`plancheck {name}`"
        import difflib  # only on this error path

        # Unknown options are reported by the top-level parser: the command's options are
        # those of its subparser.
        parsers = [self, *(parser for action in self._actions
                           if isinstance(action, argparse._SubParsersAction)
                           for parser in action.choices.values())]
        options = [o for parser in parsers for action in parser._actions
                   for o in action.option_strings if o.startswith("--")]
        close = difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.75)
        return f"`{close[0]}`" if close else None

    def format_help(self) -> str:
        # The examples and exit statuses are read only when help is printed: no run pays for
        # them (plancheck.cli.helptext).
        if self.epilog is None:
            from plancheck.cli.helptext import epilog

            self.epilog = epilog(self.prog)
        return super().format_help()

    def _print_message(self, message: str, file: Any = None) -> None:
        # argparse ignores a failed write: `--help > /dev/full` would exit 0 with no help.
        if message:
            (file or sys.stderr).write(message)
            (file or sys.stderr).flush()

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # A command's files may come after its options (`check a.json --quiet b.json`):
        # argparse only does that in intermixed mode, which commands with subcommands lack.
        # A command that passes the rest of its line on (`mcp-proxy -- SERVER ...`) cannot.
        if self._intermixing or any(isinstance(action, argparse._SubParsersAction)
                                    or action.nargs == argparse.REMAINDER
                                    for action in self._actions):
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def _read_limit(args: argparse.Namespace) -> None:
    """Every file a command reads is held to ``--max-size`` (plancheck.fileio), set here once
    for all its readers."""
    size = getattr(args, "max_size", None)
    if size is None:
        return
    from plancheck.fileio import parse_size, set_read_limit

    try:
        set_read_limit(parse_size(size))
    except ValueError as error:
        raise UsageError(f"--max-size: {error}") from None


# name -> (module, one-line help). Each module defines ``add_arguments(parser)`` and
# ``run(args) -> int``. Only the command being run is imported (``--help`` and ``--version``
# import none), so that starting the command line costs only what that command needs.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "check": ("plancheck.cli.check", "lint plans (the default command)"),
    "fmt": ("plancheck.cli.fmt", "print a plan as DSL or canonical JSON"),
    "explain": ("plancheck.cli.explain", "describe a diagnostic code"),
    "fix": ("plancheck.cli.fix", "repair a plan with minimum edits (Z3)"),
    "synth": ("plancheck.cli.synth", "enumerate type-correct workflows (Z3)"),
    "compile": ("plancheck.cli.compile", "compile a plan to typed Python"),
    "score": ("plancheck.cli.score", "score predictions against gold plans"),
    "report": ("plancheck.cli.report", "reproduce the paper's tables from scored results"),
    "plan": ("plancheck.cli.plan", "generate plans for benchmark tasks"),
    "toolset": ("plancheck.cli.toolset", "inspect, convert and export toolsets"),
    "mcp-proxy": ("plancheck.cli.mcp_proxy", "guard an MCP server's tool calls (stdio)"),
}


def _command_module(name: str) -> Any | None:
    """The module of command ``name``, or None when this installation lacks it."""
    import importlib

    module_name = SUBCOMMANDS[name][0]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise
        return None


def _installed(name: str) -> bool:
    """Whether this installation has command ``name``, without importing its module."""
    from importlib.util import find_spec

    return find_spec(SUBCOMMANDS[name][0]) is not None


class _Version(argparse.Action):
    """``--version``: the version and which build runs (read only when asked)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        from plancheck.build_info import build_info

        print(f"plancheck {__version__} ({build_info().label})")
        parser.exit()


def build_parser(command: str | None = None, module: Any | None = None
                 ) -> argparse.ArgumentParser:
    """The parser of ``command`` (whose module is ``module``), or with no command, of every
    installed command without their options (for the top-level help and the list of valid
    choices). A run parses the options of one command only: building the others' parsers
    would only cost start-up time."""
    parser = _Parser(
        prog="plancheck",
        description="A statically typed, compiler-style checker for LLM tool-use plans.",
    )
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="show the version and the build (compiled or plain Python)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module_name, help_text) in SUBCOMMANDS.items():
        selected = module if name == command else None
        if selected is None and (command is not None or not _installed(name)):
            continue
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if selected is not None:
            selected.add_arguments(sub)
            if name in CONFIGURED:
                sub.add_argument("--config", metavar="FILE", default=None,
                                 help="read settings from FILE (a plancheck.toml, or a "
                                 "pyproject.toml with [tool.plancheck]) instead of the "
                                 "nearest one")
                sub.add_argument("--no-config", action="store_true",
                                 help="ignore configuration files")
    return parser


# The commands that read the configuration file's settings they have options for (``tools``,
# ``policy``, ``max-size``, ``strict-json``) through :func:`_configure`; ``check`` reads them
# itself (with its report settings). docs/configuration.md has the table.
CONFIGURED = frozenset({"compile", "fix", "fmt", "synth", "score", "plan", "report"})
# Settings a command has an option for: the file's value stands in for an option not given.
_SETTINGS = (("tools", "tools"), ("policy", "policy"), ("max_size", "max_size"),
             ("strict_json", "strict_json"))


def _configure(args: argparse.Namespace) -> bool:
    """Fill the options not given on the command line from the configuration file, as
    ``check`` does; False after saying why the file cannot be used (exit 2). A configured
    policy a command cannot apply is said, never dropped in silence."""
    if args.command not in CONFIGURED and args.command != "toolset":
        return True
    if getattr(args, "no_config", False):
        if getattr(args, "config", None) is not None:
            raise UsageError("--config and --no-config contradict each other")
        return True
    from plancheck.config import ConfigError, discover

    try:
        config = discover(getattr(args, "config", None))
    except ConfigError as error:
        from plancheck.cli.config_errors import print_config_error

        print_config_error(error, "nothing was done")
        return False
    args.configured = set()
    for key, dest in _SETTINGS:
        value = getattr(config, key)
        if value is None or not hasattr(args, dest) or getattr(args, dest) not in (None, False):
            continue
        setattr(args, dest, str(value) if dest == "max_size" else value)
        args.configured.add(dest)
    if config.policy is not None and not hasattr(args, "policy") and args.command == "synth":
        print(f"plancheck: warning: the configured policy {config.policy} is not applied by "
              "`synth` (it enumerates workflows; check them with `plancheck check`)",
              file=sys.stderr)
    return True


_GC_YOUNG = 100_000


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:
        # --max-size holds for this command only: the API (plancheck.check) and a later main()
        # of the same process read with the default limit again.
        fileio = sys.modules.get("plancheck.fileio")
        if fileio is not None:
            fileio.set_read_limit(fileio.DEFAULT_MAX_SIZE)


def _main(argv: Sequence[str] | None) -> int:
    # A check allocates many small objects and few cycles: with Python's default thresholds
    # the collector walked the growing heap again and again (half the CPU time of a plan of
    # thousands of steps). Fewer collections, as mypy does; the library leaves gc alone.
    gc.set_threshold(_GC_YOUNG, 50, 100)
    args_list = list(sys.argv[1:] if argv is None else argv)
    _prepare_standard_streams()
    command: str | None = None
    try:
        if args_list and args_list[0] not in SUBCOMMANDS and args_list[0] not in (
            "-h", "--help", "--version"
        ):
            _refuse_misspelt_command(args_list[0])
            args_list.insert(0, "check")
        # The only top-level options (--help, --version) exit before a command runs, so the
        # command to run, if any, is the first word.
        command = args_list[0] if args_list and args_list[0] in SUBCOMMANDS else None
        module = _command_module(command) if command is not None else None
        # Without its module (an installation that lacks it) the command is an invalid
        # choice among those installed.
        parser = build_parser(command if module is not None else None, module)
        args = parser.parse_args(args_list)
        if not _configure(args):
            return EXIT_ERROR
        _read_limit(args)
        if args.command is None:
            parser.print_help()
            return EXIT_ERROR
        assert module is not None  # args.command is None unless a command's module loaded
        if command != "mcp-proxy":  # (the proxy forwards signals to its server itself)
            _stop_on_signals()
        run: Command = module.run
        code = run(args)
        sys.stdout.flush()  # here, where a reader that went away is still caught (below)
        return code
    except UsageError as error:
        print(f"plancheck: error: {error}", file=sys.stderr)
        print(f"Run `plancheck {command + ' ' if command else ''}--help` for usage.",
              file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as error:
        if isinstance(error, Terminated):
            import signal

            print(f"plancheck: stopped by {signal.Signals(error.signum).name}",
                  file=sys.stderr)
            return 128 + error.signum
        print("plancheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): nothing more can be said, and the report is
        # incomplete, so the run did not pass (an I/O error; 0 would read as "clean").
        with contextlib.suppress(OSError):
            sys.stdout.close()
        return EXIT_ERROR
    except SystemExit as exit_:
        code = int(exit_.code) if isinstance(exit_.code, int) else EXIT_ERROR
        try:  # --help and --version print and exit: their output must reach its reader too
            sys.stdout.flush()
        except OSError as error:
            print(f"plancheck: error[PC001]: cannot write the output: {error.strerror or error}",
                  file=sys.stderr)
            return EXIT_ERROR
        return code
    except OSError as error:  # the environment failed (a full disk, a permission): not a bug
        where = f"{error.filename}: " if error.filename else ""
        print(f"plancheck: error[PC001]: {where}{error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as error:  # the last line of defence: never a traceback
        from plancheck.formats.plugins import PluginError

        if isinstance(error, PluginError):  # an installed plugin's fault, not plancheck's
            print(f"plancheck: error: {error}", file=sys.stderr)
            print("plancheck loads the plugins of every installed package (entry points "
                  "`plancheck.*`): fix or uninstall the one named.", file=sys.stderr)
            return EXIT_ERROR
        print(f"plancheck: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        print("This is a bug in plancheck; please report it with the input that caused it.",
              file=sys.stderr)
        return EXIT_ERROR


# ----------------------------------------------------------------------- standard streams
# A stream the shell closed (`plancheck - <&-`, `>&-`) is None in Python; it is replaced by a
# stand-in whose every read or write raises OSError (EBADF), which the commands report as PC001
# (exit 2). Text a stream's encoding cannot hold (an ASCII locale, a lone surrogate read from a
# JSON escape) is written as a JSON-style \uXXXX escape: JSON output stays valid, text reads
# the same. (Here rather than in a module of its own: every run pays for each import.)

_ESCAPE_ERRORS = "plancheck.json-escape"


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    escaped = []
    for char in error.object[error.start:error.end]:
        code = ord(char)
        if code > 0xFFFF:  # outside the BMP: a surrogate pair, as JSON spells it
            code -= 0x10000
            escaped.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            escaped.append(f"\\u{code:04x}")
    return "".join(escaped), error.end


class ClosedStream:
    """Stands in for a standard stream the process was started without."""

    encoding = "utf-8"
    errors = "strict"
    closed = False

    def __init__(self, what: str) -> None:
        self.name = f"<{what}>"
        self._what = what
        self.buffer = self

    def _refuse(self, *_args: object, **_kwargs: object) -> None:
        import errno

        raise OSError(errno.EBADF, f"standard {self._what} is closed")

    read = readline = readlines = read1 = readinto = write = writelines = fileno = _refuse

    def __iter__(self) -> ClosedStream:
        self._refuse()
        return self

    def flush(self) -> None:
        """Nothing was written, so nothing is lost."""

    def isatty(self) -> bool:
        return False

    def readable(self) -> bool:
        return False

    def writable(self) -> bool:
        return False


class _Sink(ClosedStream):
    """Stands in for a closed standard error: there is nowhere left to say anything, and the
    exit code still tells."""

    def write(self, text: str) -> int:  # type: ignore[override]
        return len(text)

    def writelines(self, lines: object) -> None:  # type: ignore[override]
        """Nothing to write them to."""


def _prepare_standard_streams() -> None:
    import codecs

    codecs.register_error(_ESCAPE_ERRORS, _json_escape)
    if sys.stdin is None:
        sys.stdin = ClosedStream("input")
    if sys.stdout is None:
        sys.stdout = ClosedStream("output")
    if sys.stderr is None:
        sys.stderr = _Sink("error")
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors=_ESCAPE_ERRORS)


def _refuse_misspelt_command(word: str) -> None:
    """``plancheck scroe x.json`` is a typo for ``score``, not a file named ``scroe``."""
    from plancheck.fileio import path_exists

    if word.startswith("-") or word == "-" or path_exists(word):
        return
    import difflib  # only for a word that is no file: checking a file never pays for it

    close = difflib.get_close_matches(word, list(SUBCOMMANDS), n=1, cutoff=0.6)
    if close:
        raise UsageError(f"`{word}` is neither a command nor a file; did you mean "
                         f"`plancheck {close[0]}`?")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
