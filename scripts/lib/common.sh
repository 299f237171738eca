# shellcheck shell=bash
# Helpers shared by the scripts in scripts/. Source it; it defines functions and FERRY_ROOT, nothing else.

# The repository root: the parent of the scripts/ folder this file lives in.
FERRY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# The calling script's name, for message prefixes.
FERRY_PROG="${FERRY_PROG:-$(basename "$0")}"

say() { printf '%s: %s\n' "$FERRY_PROG" "$*"; }
warn() { printf '%s: warning: %s\n' "$FERRY_PROG" "$*" >&2; }
die() {
  printf '%s: error: %s\n' "$FERRY_PROG" "$*" >&2
  exit 1
}

# A section header, so long runs read as steps.
step() { printf '\n==> %s\n' "$*"; }

# Runs scripts/install-deps, through sudo when not root (install-deps needs root only when something is
# missing; it checks first, so a complete machine never reaches apt-get). Arguments go to install-deps.
install_deps() {
  if [ "$(id -u)" -eq 0 ] || ! command -v sudo >/dev/null 2>&1; then
    bash "$FERRY_ROOT/scripts/install-deps" "$@"
  else
    sudo bash "$FERRY_ROOT/scripts/install-deps" "$@"
  fi
}

# Fails unless $1 is a positive integer; $2 names it in the message.
require_uint() {
  case "$1" in
    '' | *[!0-9]*) die "$2 must be a positive integer, got '$1'" ;;
  esac
  [ "$1" -gt 0 ] || die "$2 must be a positive integer, got '$1'"
}
