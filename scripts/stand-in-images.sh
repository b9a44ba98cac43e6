#!/usr/bin/env bash
# Stand-in base images, for a machine that cannot reach Docker Hub (the container test,
# tests/ops/compose-stack.test.ts): made from Debian's packages and the hash-pinned Node, under the
# names the Dockerfile, docker-compose.yml and deploy/proxy/Dockerfile use, so those are built and
# run unchanged.
#
#   debian:bookworm-slim   `debootstrap --variant=minbase bookworm`, slimmed as the official image is
#                          (no documentation or locales, no package lists or downloaded packages)
#   node:24-bookworm-slim  that + the Node of scripts/fetch-node.sh (hash pinned) in /usr/local, npm
#                          (hash pinned below) and a `node` user of uid 1000, as the official image
#   redis:7-bookworm       that + Debian's redis-server, started as the official image starts it: as
#                          the redis user, in /data, protected mode off (the official build's default)
#
# Where this machine's Node trusts extra certificate authorities (NODE_EXTRA_CA_CERTS: an egress
# proxy that intercepts TLS), the stand-in Node trusts them too, so an image build reaches the npm
# registry as the machine does; the official image needs no such thing.
#
#   scripts/stand-in-images.sh        makes what is missing, one line per image on stdout
#
# Each image carries the key of what it is made from (its recipe below, its parent's key, the pins)
# in the label org.ceremony.stand-in-key; an image whose key matches is kept, so a warm run costs
# nothing. The debootstrap root filesystem (about 2 minutes) is also kept under
# ${XDG_CACHE_HOME:-~/.cache}/ceremony-images by its key (CEREMONY_IMAGE_CACHE moves it), so a
# machine whose image store was emptied makes the three images again in about a minute. Runs are
# serialised by a lock in that folder.
#
# Containers run with runc and explicit rlimits (PODMAN_RUN_FLAGS): crun refuses a cgroup v1 host,
# and a host whose own limits are below podman's defaults refuses to raise them.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${CEREMONY_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceremony-images}"
read -r -a run_flags <<<"${PODMAN_RUN_FLAGS:---runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096}"
suite=bookworm
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
npm_version=11.19.1
npm_integrity=sha512-ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g==
label=org.ceremony.stand-in-key

for tool in podman debootstrap flock sha256sum; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "stand-in-images: $tool is not installed (apt-get install podman runc debootstrap)" >&2
    exit 1
  fi
done
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
work="$(mktemp -d "$cache/.work-XXXXXX")"
trap 'rm -rf "$work"' EXIT

sha() { sha256sum | cut -c1-16; }
key_of() { podman image inspect --format "{{index .Labels \"$label\"}}" "$1" 2>/dev/null || true; }
id_of() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }
# The image a new one replaced under `name`, once nothing uses it (a newer recipe's leftover).
drop_replaced() {
  if [ -n "$2" ] && [ "$2" != "$(id_of "$1")" ]; then podman rmi "$2" >/dev/null 2>&1 || true; fi
}
say() { echo "stand-in-images: $*" >&2; }

# --- debian:bookworm-slim ------------------------------------------------------------------------

slim_rootfs() {
  local root="$1"
  # The official image's dpkg and apt settings: no documentation, manuals or locales from later
  # installs, downloaded packages removed after each install.
  cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EOF
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root"/usr/share/{man,info,groff,lintian,linda,locale}/* "$root"/var/lib/apt/lists/* \
    "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin "$root"/var/log/* "$root"/tmp/*
  : >"$root/etc/hostname"
  rm -f "$root/etc/resolv.conf"
}

debian_image() {
  local name=docker.io/library/debian:bookworm-slim
  local key
  key="$(printf '%s\n' "$suite" "$mirror" "$(declare -f slim_rootfs)" | sha)"
  if [ "$(key_of "$name")" = "$key" ]; then echo "$name $key (kept)"; DEBIAN_KEY="$key"; return; fi
  local tarball="$cache/debian-$suite-minbase-$key.tar.gz"
  if [ ! -f "$tarball" ]; then
    say "debootstrap --variant=minbase $suite (about 2 minutes)"
    debootstrap --variant=minbase "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
      tail -20 "$work/debootstrap.log" >&2
      exit 1
    }
    slim_rootfs "$work/rootfs"
    tar -C "$work/rootfs" --numeric-owner -czf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$work/rootfs"
    # Root filesystems of older recipes: never used again.
    find "$cache" -maxdepth 1 -name "debian-$suite-minbase-*.tar.gz" -not -name "$(basename "$tarball")" -delete
  fi
  local replaced
  replaced="$(id_of "$name")"
  podman import --quiet --change 'CMD ["bash"]' --change "LABEL $label=$key" "$tarball" "$name" >/dev/null
  drop_replaced "$name" "$replaced"
  echo "$name $key (made)"
  DEBIAN_KEY="$key"
}

# --- node:24-bookworm-slim -----------------------------------------------------------------------

npm_package() {
  local tarball="$cache/npm-$npm_version.tgz"
  if [ ! -f "$tarball" ]; then
    say "downloading npm@$npm_version from the npm registry"
    (cd "$work" && npm pack --silent "npm@$npm_version" >/dev/null)
    local actual
    actual="sha512-$(openssl dgst -sha512 -binary "$work/npm-$npm_version.tgz" | base64 -w0)"
    if [ "$actual" != "$npm_integrity" ]; then
      say "npm@$npm_version does not have the pinned hash (got $actual); refusing it"
      exit 1
    fi
    mv "$work/npm-$npm_version.tgz" "$tarball"
  fi
  echo "$tarball"
}

node_containerfile() {
  cat <<'EOF'
FROM docker.io/library/debian:bookworm-slim
COPY node/ /usr/local/
COPY npm/ /usr/local/lib/node_modules/npm/
EOF
  if [ -n "$extra_ca" ]; then
    printf '%s\n' 'COPY extra-ca.pem /usr/local/share/ca-certificates/machine-extra-ca.pem' \
      'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/machine-extra-ca.pem'
  fi
  cat <<'EOF'
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
    && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
    && node --version && npm --version
CMD ["node"]
EOF
}

node_image() {
  local name=docker.io/library/node:24-bookworm-slim
  local node_home
  node_home="$(scripts/fetch-node.sh --home)"
  local node_version
  node_version="$("$node_home/bin/node" --version)"
  local extra_ca=""
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r "$NODE_EXTRA_CA_CERTS" ]; then extra_ca="$NODE_EXTRA_CA_CERTS"; fi
  local key
  key="$(printf '%s\n' "$DEBIAN_KEY" "$node_version" "$npm_integrity" "$(node_containerfile)" \
    "$(if [ -n "$extra_ca" ]; then sha <"$extra_ca"; fi)" | sha)"
  if [ "$(key_of "$name")" = "$key" ]; then echo "$name $key (kept)"; return; fi
  local context="$work/node"
  mkdir -p "$context/node/bin" "$context/node/include" "$context/npm"
  cp "$node_home/bin/node" "$context/node/bin/node"
  cp -R "$node_home/include/node" "$context/node/include/node"
  tar -xzf "$(npm_package)" -C "$context/npm" --strip-components=1
  if [ -n "$extra_ca" ]; then cp "$extra_ca" "$context/extra-ca.pem"; fi
  node_containerfile >"$context/Containerfile"
  say "building $name (Node $node_version, npm $npm_version)"
  local replaced
  replaced="$(id_of "$name")"
  podman build --quiet --pull=never "${run_flags[@]}" --label "$label=$key" \
    --env "NODE_VERSION=${node_version#v}" -t "$name" "$context" >/dev/null
  drop_replaced "$name" "$replaced"
  echo "$name $key (made)"
}

# --- redis:7-bookworm ----------------------------------------------------------------------------

redis_entrypoint() {
  cat <<'EOF'
#!/bin/sh
# As the official redis image's entrypoint: `redis-server …` runs as the redis user (owning /data),
# and with protected mode off unless told otherwise, as the official build's default is.
set -e
case "$1" in -*) set -- redis-server "$@" ;; esac
if [ "$1" = redis-server ] && [ "$(id -u)" = 0 ]; then
  find . \! -user redis -exec chown redis '{}' +
  exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi
if [ "$1" = redis-server ]; then
  case " $* " in *" --protected-mode "*) ;; *) set -- "$@" --protected-mode no ;; esac
fi
exec "$@"
EOF
}

redis_containerfile() {
  cat <<'EOF'
FROM docker.io/library/debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/* && mkdir /data && chown redis:redis /data
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /data
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
EOF
}

redis_image() {
  local name=docker.io/library/redis:7-bookworm
  local key
  key="$(printf '%s\n' "$DEBIAN_KEY" "$(redis_containerfile)" "$(redis_entrypoint)" | sha)"
  if [ "$(key_of "$name")" = "$key" ]; then echo "$name $key (kept)"; return; fi
  local context="$work/redis"
  mkdir -p "$context"
  redis_containerfile >"$context/Containerfile"
  redis_entrypoint >"$context/docker-entrypoint.sh"
  chmod 755 "$context/docker-entrypoint.sh"
  say "building $name (Debian's redis-server)"
  local replaced
  replaced="$(id_of "$name")"
  podman build --quiet --pull=never "${run_flags[@]}" --label "$label=$key" -t "$name" "$context" >/dev/null
  drop_replaced "$name" "$replaced"
  echo "$name $key (made)"
}

debian_image
node_image
redis_image
