#!/usr/bin/env bash
# Install bubblewrap (`bwrap`), the OS sandbox that python tool bodies run in (docs/security.md), where it can.
#
#   bash scripts/setup_sandbox.sh            # best effort: says what to do when it cannot install; exits 0
#   bash scripts/setup_sandbox.sh --require  # exits 1 unless a usable bwrap is there afterwards (CI)
#
# Nothing to do when bwrap is already installed. Otherwise it uses the system's package manager (apt-get, dnf,
# yum, zypper, pacman or apk), as root or through sudo, and says how to install it by hand when neither works.
# Without bwrap, forgec refuses to run python tool bodies unless FORGEC_UNSAFE_NO_SANDBOX=1 is set (unisolated:
# unsafe). Output goes to stderr, so the README's set-up command shows it and carries on.
set -u
require=0
[ "${1:-}" = "--require" ] && require=1

say() { printf 'setup_sandbox: %s\n' "$*" >&2; }

find_bwrap() {
  if [ -n "${FORGEC_BWRAP:-}" ] && [ -x "${FORGEC_BWRAP}" ]; then echo "$FORGEC_BWRAP"
  elif [ -x /usr/bin/bwrap ]; then echo /usr/bin/bwrap
  else command -v bwrap 2>/dev/null || true
  fi
}

usable() {  # the namespaces forgec's sandbox needs: a user, pid, network and ipc namespace with / read-only
  "$1" --unshare-user --unshare-pid --unshare-net --unshare-ipc --die-with-parent --ro-bind / / --proc /proc --dev /dev \
    true >/dev/null 2>&1
}

how_to() {
  say "install bubblewrap with your package manager, e.g. 'sudo apt-get install bubblewrap' (Debian/Ubuntu),"
  say "  'sudo dnf install bubblewrap' (Fedora/RHEL), 'sudo pacman -S bubblewrap' (Arch), 'sudo apk add bubblewrap' (Alpine);"
  say "  or set FORGEC_BWRAP to a bwrap binary. Until then python tool bodies are refused; FORGEC_UNSAFE_NO_SANDBOX=1"
  say "  runs them without isolation (unsafe: only for docs you trust; see docs/security.md)."
}

done_with() {  # $1: bwrap path or empty
  if [ -z "$1" ]; then
    how_to
    exit $require
  fi
  if usable "$1"; then
    say "bubblewrap ready: $1"
    exit 0
  fi
  say "$1 is installed but cannot create the namespaces the sandbox needs: enable unprivileged user namespaces"
  say "  ('sysctl user.max_user_namespaces' > 0; on Ubuntu 24.04+ 'sysctl kernel.apparmor_restrict_unprivileged_userns=0'),"
  say "  or run where they are allowed (a container needs --privileged or a seccomp profile that permits them)."
  say "  Until then python tool bodies are refused; FORGEC_UNSAFE_NO_SANDBOX=1 runs them unisolated (unsafe)."
  exit $require
}

have=$(find_bwrap)
[ -n "$have" ] && done_with "$have"

if [ "$(uname -s)" != Linux ]; then
  say "bubblewrap needs Linux (found $(uname -s)): python tool bodies are refused here unless FORGEC_UNSAFE_NO_SANDBOX=1 (unsafe)."
  exit $require
fi

if [ "$(id -u)" = 0 ]; then SUDO=()
elif command -v sudo >/dev/null 2>&1; then SUDO=(sudo)
else
  say "bwrap is not installed, and neither root nor sudo is available to install it."
  done_with ""
fi

say "bwrap is not installed: installing the bubblewrap package${SUDO:+ with sudo}"
if command -v apt-get >/dev/null 2>&1; then
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 \
    && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >&2
elif command -v dnf >/dev/null 2>&1; then "${SUDO[@]}" dnf install -y bubblewrap >&2
elif command -v yum >/dev/null 2>&1; then "${SUDO[@]}" yum install -y bubblewrap >&2
elif command -v zypper >/dev/null 2>&1; then "${SUDO[@]}" zypper --non-interactive install bubblewrap >&2
elif command -v pacman >/dev/null 2>&1; then "${SUDO[@]}" pacman -S --noconfirm --needed bubblewrap >&2
elif command -v apk >/dev/null 2>&1; then "${SUDO[@]}" apk add bubblewrap >&2
else say "no package manager found that this script knows."
fi || say "the package install failed (see above)."

done_with "$(find_bwrap)"
