#!/usr/bin/env bash
# Install StrataGate Inspector into ./.venv, with the Debian packages it needs.
#   bash packaging/setup-env.sh          the app and the `stratagate` CLI
#   bash packaging/setup-env.sh --test   also PostgreSQL, the test tools and PyInstaller
# Only missing Debian packages are installed, so a second run is quick.
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
[ "${1:-}" = "--test" ] && with_tests=1

# Qt's xcb, wayland and offscreen platforms load these at run time; a bare Debian image lacks some of them.
debian_packages=(python3 python3-venv python3-pip libegl1 libgl1 libopengl0 libfontconfig1 libdbus-1-3
  libglib2.0-0 libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1
  libxcb-image0 libxcb-randr0 libxcb-render-util0 libxcb-xinerama0 libxcb-shape0 libwayland-cursor0
  libwayland-egl1 fonts-dejavu-core)
if [ "$with_tests" = 1 ]; then
  # PostgreSQL for the storage suite (the tests start their own server), binutils for PyInstaller,
  # desktop-file-utils to validate the desktop entry.
  debian_packages+=(postgresql binutils sqlite3 desktop-file-utils)
fi

missing=()
for package in "${debian_packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup-env: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup-env: not root, so these Debian packages are not installed: ${missing[*]}" >&2
  fi
fi

python=python3
command -v python3.11 >/dev/null 2>&1 && python=python3.11
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
if [ "$with_tests" = 1 ]; then
  .venv/bin/python -m pip install --quiet -e '.[test,postgresql,packaging]'
else
  .venv/bin/python -m pip install --quiet -e '.[postgresql]'
fi
echo "setup-env: ready in $(pwd)/.venv"
