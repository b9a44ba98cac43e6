# One image for the coordinator server and the verification workers.
FROM node:20-bookworm-slim
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY vite.config.ts ./
COPY web ./web
RUN npx vite build && npm prune --omit=dev
COPY bin ./bin
COPY cli ./cli
COPY core ./core
COPY server ./server
COPY worker ./worker
COPY types ./types
COPY tsconfig.json ./
ENV NODE_ENV=production
ENTRYPOINT ["node", "bin/ceremony.js"]
