#!/usr/bin/env bash
# ensure-debs.sh PKG... — install the Debian packages that are missing (when root), or print
# one line naming them and fail.
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "walkfuzz setup: installing ${missing[*]}"
  # Slim Debian images have no man directories, and the JDK's postinst (update-alternatives
  # linking java.1.gz) fails without this one.
  mkdir -p /usr/share/man/man1
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "walkfuzz setup: missing Debian packages: ${missing[*]} (run: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
