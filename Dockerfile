# One image for the coordinator server and the verification workers, built the way a coordinator
# installs the project: the install runs `prepare` (scripts/build.js: tsc → dist/, Vite → web/dist),
# then the dev dependencies go. `ceremony` (bin/ceremony.js) then runs dist/ with plain Node.
# tests/ops/compose-topology.test.ts runs this ENTRYPOINT and ENV with docker-compose.yml's commands.
FROM node:24-bookworm-slim
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY . .
# `npm ci` refuses this lockfile where a registry mirror lacks other platforms' optional packages
# (npm/cli#8320); `npm install` installs the same locked versions (docs/operations.md, .ci/run).
RUN (npm ci --no-audit --no-fund || npm install --no-audit --no-fund) \
    && test -f dist/cli/main.js && test -f web/dist/index.html \
    && npm prune --omit=dev
ENV NODE_ENV=production
ENTRYPOINT ["node", "bin/ceremony.js"]
