# One image for the coordinator server and the verification workers (docker-compose.yml), run as
# the unprivileged `node` user with `ceremony` (bin/ceremony.js) as its entrypoint.
#
# Three stages, so that a change of the sources rebuilds only the last steps: `dependencies`
# installs every package from the lockfile alone (the build tools and native modules need python3,
# make and g++, which stay in that stage); `build` compiles the app (scripts/build.js: tsc → dist/,
# Vite → web/dist); `production-dependencies` drops the dev packages. The final image has Node, the
# production packages and the built app, not the sources or a compiler.
# tests/ops/compose-stack.test.ts builds this file as it is and runs a ceremony on it.
FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
# node-gyp builds native modules against the image's own Node headers, without a download.
ENV npm_config_nodedir=/usr/local
# The scripts npm runs: `preinstall` (scripts/check-node-version.js) checks the Node, `prepare`
# (scripts/build.js) finds no sources yet and builds nothing. `npm ci` refuses this
# lockfile where a registry mirror lacks other platforms' optional packages (npm/cli#8320);
# `npm install` installs the same locked versions (docs/operations.md).
COPY package.json package-lock.json ./
COPY scripts/check-node-version.js scripts/build.js scripts/
COPY core/runtime/build-state.js core/runtime/
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund

FROM dependencies AS build
COPY . .
RUN npm run build && test -f dist/cli/main.js && test -f web/dist/index.html

FROM dependencies AS production-dependencies
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# The data volume's mount point, owned by the user the services run as: a new named volume takes
# its owner from here, so the coordinator can write to it.
RUN mkdir /data && chown node:node /data
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/package.json ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/core/runtime/build-state.js ./core/runtime/
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
USER node
ENTRYPOINT ["node", "bin/ceremony.js"]
