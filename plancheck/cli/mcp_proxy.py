"""``plancheck mcp-proxy [--tools POOL] [--profile P] [--policy FILE] [--references SYNTAX]
-- SERVER_COMMAND ...``:
an MCP server over stdio that starts ``SERVER_COMMAND`` and checks each ``tools/call`` with a
:class:`plancheck.Guard` before it reaches the server (:mod:`plancheck.integrations.mcp.proxy`).
Point an MCP client (Claude Desktop, an SDK client) at ``plancheck mcp-proxy -- SERVER ...``
where it would start ``SERVER ...``.

With ``--url URL`` (a server over Streamable HTTP or SSE) or ``--transport http|sse`` (serving
clients over HTTP), the proxy is FastMCP's (``create_proxy``) with the guard as its middleware
(:mod:`plancheck.integrations.mcp.fastmcp_guard`)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from plancheck.cli import EXIT_ERROR
from plancheck.cli.common import load_policies_or_exit, load_toolset_or_exit, print_plain


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from plancheck.compiler.profiles import PROFILE_NAMES

    parser.add_argument("--tools", metavar="POOL", default=None,
                        help="check calls against this pool (default: the server's own "
                             "tools/list, asked before the first call)")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default="guard",
                        help="which findings refuse a call (default: guard, where every "
                             "schema violation does)")
    parser.add_argument("--policy", metavar="FILE", default=None,
                        help="refuse calls that break the policies of FILE (`policy NAME "
                             "{ ... }` blocks)")
    parser.add_argument("--references", metavar="SYNTAX", action="append", default=None,
                        help="read string arguments written in SYNTAX (e.g. `template`: "
                             "{{steps.K.output.KEY}}) as references to earlier results, "
                             "substituted before the call is forwarded; repeatable; default: "
                             "none, every string is text (docs/guard.md)")
    parser.add_argument("--max-message-size", metavar="BYTES", type=_positive, default=None,
                        help="refuse a message longer than this, from either side (default: "
                             "64 MiB)")
    parser.add_argument("--max-pages", metavar="N", type=_positive, default=None,
                        help="read at most N pages of the server's tools/list (default: 100)")
    parser.add_argument("--url", metavar="URL", default=None,
                        help="guard the MCP server at URL (Streamable HTTP, or SSE for a URL "
                             "ending in /sse) instead of starting one; needs FastMCP")
    parser.add_argument("--transport", choices=("stdio", "http", "sse"), default="stdio",
                        help="serve clients over this transport (default: stdio; http and "
                             "sse need FastMCP)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to serve http/sse on (default: 127.0.0.1)")
    parser.add_argument("--port", type=_positive, default=8000,
                        help="the port to serve http/sse on (default: 8000)")
    parser.add_argument("server", nargs=argparse.REMAINDER, metavar="-- SERVER_COMMAND ...",
                        help="the MCP server to start and guard")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if command and args.url is not None:
        print("plancheck mcp-proxy: name a server to start after `--` or give --url, not both",
              file=sys.stderr)
        return EXIT_ERROR
    if not command and args.url is None:
        print("plancheck mcp-proxy: name the server to start after `--`, e.g. "
              "`plancheck mcp-proxy -- npx -y @modelcontextprotocol/server-filesystem /tmp`",
              file=sys.stderr)
        return EXIT_ERROR
    from plancheck.guard.references import declared_syntaxes
    from plancheck.ir.nodes import Toolset

    try:
        declared_syntaxes(Toolset(""), args.references)
    except ValueError as error:
        print(f"plancheck mcp-proxy: --references: {error}", file=sys.stderr)
        return EXIT_ERROR
    toolset = None
    policies: Any = args.policy
    if args.tools is not None:
        toolset, problems = load_toolset_or_exit(args.tools)
        if toolset is None:
            print_plain(problems)
            return EXIT_ERROR
        if args.policy is not None:
            from plancheck.smt.policy_check import DEFAULT_TIMEOUT_MS

            policies = load_policies_or_exit(args.policy, toolset, DEFAULT_TIMEOUT_MS)
            if policies is None:
                return EXIT_ERROR
    elif args.policy is not None:
        try:  # read now, checked against the server's tools once they are known
            with open(args.policy, encoding="utf-8") as handle:
                policies = handle.read()
        except OSError as error:
            print(f"plancheck mcp-proxy: cannot read {args.policy}: "
                  f"{error.strerror or error}", file=sys.stderr)
            return EXIT_ERROR

    def make_guard(tools: Any) -> Any:
        from plancheck.guard import Guard
        from plancheck.policy.loader import PolicyError

        try:
            # provenance (which earlier result a value was copied from) only serves policies;
            # without one it would scan every large argument for nothing. No one reads the
            # proxy's trajectory: the arguments of the calls it forwarded are not kept.
            return Guard(toolset if tools is None else tools, profile=args.profile,
                         policies=policies, references=args.references,
                         provenance=policies is not None, keep_arguments=False)
        except PolicyError as error:
            raise ValueError(f"the policy file {args.policy} cannot be used: "
                             + "; ".join(d.message for d in error.diagnostics)) from None

    if args.url is not None or args.transport != "stdio":
        return _run_fastmcp(args, command, toolset, policies)
    from plancheck.integrations.mcp.proxy import DEFAULT_MAX_MESSAGE, DEFAULT_MAX_PAGES, McpProxy

    proxy = McpProxy(command, make_guard, pool_known=toolset is not None,
                     client_in=sys.stdin.buffer, client_out=sys.stdout.buffer,
                     max_message=args.max_message_size or DEFAULT_MAX_MESSAGE,
                     max_pages=args.max_pages or DEFAULT_MAX_PAGES)
    return proxy.run()


def _run_fastmcp(args: argparse.Namespace, command: list[str], toolset: Any,
                 policies: Any) -> int:
    try:
        from fastmcp.client.transports import StdioTransport
        from fastmcp.server import create_proxy

        from plancheck.integrations.mcp.fastmcp_guard import GuardMiddleware
    except ModuleNotFoundError:
        print("plancheck mcp-proxy --url / --transport http|sse needs FastMCP: "
              "pip install 'plancheck[fastmcp]'", file=sys.stderr)
        return EXIT_ERROR
    # the server gets the proxy's environment, as it does on the stdio proxy (FastMCP's default
    # passes only a few variables)
    target: Any = args.url if args.url is not None else StdioTransport(
        command[0], command[1:], env=dict(os.environ))
    proxy = create_proxy(target, name="plancheck mcp-proxy")
    proxy.add_middleware(GuardMiddleware(policies, profile=args.profile, tools=toolset,
                                         references=args.references, keep_arguments=False))
    served: dict[str, Any] = {} if args.transport == "stdio" else {"host": args.host,
                                                                   "port": args.port}
    proxy.run(transport=args.transport, show_banner=False, **served)
    return 0
