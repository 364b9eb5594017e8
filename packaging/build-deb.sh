#!/usr/bin/env bash
# Package the PyInstaller bundle as a Debian package: build/deb/stratagate-inspector_VERSION_ARCH.deb.
#   bash packaging/build-deb.sh [BUNDLE] [OUT_DIR]
# BUNDLE defaults to dist/stratagate-inspector (made by packaging/build.sh, which runs first if it is missing).
# Installs the bundle under /opt/stratagate-inspector, links /usr/bin/stratagate-inspector and
# /usr/bin/stratagate to it, and adds the desktop entry and icons. No maintainer scripts: the desktop and
# icon caches are refreshed by the triggers of desktop-file-utils and hicolor-icon-theme.
#   sudo apt install ./build/deb/stratagate-inspector_*.deb      remove with: sudo apt remove stratagate-inspector
set -euo pipefail
cd "$(dirname "$0")/.."

bundle=${1:-dist/stratagate-inspector}
out=${2:-build/deb}
if [ ! -x "$bundle/stratagate-inspector" ]; then
  [ "$#" -eq 0 ] || { echo "build-deb: $bundle/stratagate-inspector not found" >&2; exit 2; }
  bash packaging/build.sh
fi

version=$(.venv/bin/python -c 'import stratagate; print(stratagate.__version__)')
architecture=$(dpkg --print-architecture)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin" "$root/usr/share/applications" \
  "$root/usr/share/icons/hicolor/scalable/apps" "$root/usr/share/icons/hicolor/256x256/apps" \
  "$root/usr/share/icons/hicolor/64x64/apps"
cp -a "$bundle" "$root/opt/stratagate-inspector"
ln -s /opt/stratagate-inspector/stratagate-inspector "$root/usr/bin/stratagate-inspector"
ln -s /opt/stratagate-inspector/stratagate "$root/usr/bin/stratagate"
install -m 644 packaging/stratagate-inspector.desktop "$root/usr/share/applications/"
install -m 644 resources/icons/stratagate-inspector.svg "$root/usr/share/icons/hicolor/scalable/apps/"
for size in 256 64; do
  install -m 644 "resources/icons/stratagate-inspector-$size.png" \
    "$root/usr/share/icons/hicolor/${size}x${size}/apps/stratagate-inspector.png"
done

# The system libraries Qt's xcb, wayland and offscreen platforms load (as in packaging/setup-env.sh).
cat > "$root/DEBIAN/control" <<CONTROL
Package: stratagate-inspector
Version: $version
Architecture: $architecture
Maintainer: StrataGate maintainers <maintainers@stratagate.invalid>
Section: devel
Priority: optional
Installed-Size: $(du -sk "$root" | cut -f1)
Depends: libc6, libegl1, libgl1, libopengl0, libfontconfig1, libdbus-1-3, libglib2.0-0, libxkbcommon0,
 libxkbcommon-x11-0, libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1, libxcb-image0, libxcb-randr0,
 libxcb-render-util0, libxcb-xinerama0, libxcb-shape0, libwayland-cursor0, libwayland-egl1
Description: review, debug and curate agent memory
 StrataGate Inspector, a desktop app for StrataGate memory files and databases,
 with the stratagate command line (import, export, migrate, search, journal verify).
CONTROL

mkdir -p "$out"
deb="$out/stratagate-inspector_${version}_${architecture}.deb"
# gzip rather than dpkg-deb's default xz: several times faster on a 250 MB bundle, for a few MB more.
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null
echo "$deb"
