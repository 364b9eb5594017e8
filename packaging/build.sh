#!/usr/bin/env bash
# Build the packaged desktop app into dist/stratagate-inspector/ and print its size and build time.
#   bash packaging/build.sh        (after `bash packaging/setup-env.sh --test`, which installs PyInstaller)
# Then: dist/stratagate-inspector/stratagate-inspector --demo (the app) or .../stratagate --help (the CLI).
# A Debian package of it: bash packaging/build-deb.sh (see README).
# To add it to a desktop's menu: copy packaging/stratagate-inspector.desktop to ~/.local/share/applications/,
# resources/icons/stratagate-inspector.svg to ~/.local/share/icons/hicolor/scalable/apps/, and put
# dist/stratagate-inspector/ on PATH (or link its binary into ~/.local/bin).
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
.venv/bin/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build \
  packaging/stratagate-inspector.spec
seconds=$(($(date +%s) - started))

echo "build: dist/stratagate-inspector/ in ${seconds} s, $(du -sh dist/stratagate-inspector | cut -f1)"
echo "build: largest parts:"
du -sh dist/stratagate-inspector/_internal/* | sort -rh | head -5
