# syntax=docker/dockerfile:1
# The rmq policy bot: `docker build -t rmq-bot .`, then run with the variables of .env.example
# (`docker run --init --env-file .env -p 3000:3000 rmq-bot`), or `docker compose up` (compose.yaml).
# Inside the container `localhost` is the container itself: .env.example's RMQ_URL=http://localhost:15672
# and REDIS_URL=redis://127.0.0.1:6379 must name hosts it reaches (or run it with --network host).

# Node 24, an LTS line (Maintenance LTS from 2026-10-20 to its end of life on 2028-04-30; Node 20's
# ended on 2026-04-30). `engines` allows 20 and later: .ci/run runs every suite on the machine's
# Node 20, and the unit suite and the terminal's e2e on Node 24 too.

# Stage 1: every dependency, the type check and the build: an image is only made from code that
# compiles. Scripts are skipped at install: `prepare` would build before the sources are here.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.ts ./scripts/
COPY src ./src
RUN npm run build

# Stage 2: production dependencies only (no tsx, esbuild, TypeScript or test tools).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

# Stage 3: what runs: compiled JavaScript, as the unprivileged `node` user of the base image.
FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist
COPY slack/manifest.yml ./slack/manifest.yml
# The terminal command too, for a CI job that has the image and not the bot's checkout:
# `docker run --rm -v "$PWD:/defs:ro" -e RMQ_URL -e RMQ_USER -e RMQ_PASSWORD rmq-bot rmq plan /defs/definitions.json`
# (a command given to `docker run` replaces CMD; there is no ENTRYPOINT in front of it).
RUN ln -s /app/bin/rmq.js /usr/local/bin/rmq
USER node
EXPOSE 3000
# /livez: the process alone (never a broker or Redis), 200 until it drains on SIGTERM.
HEALTHCHECK --interval=30s --timeout=2s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself; the bot handles it (stops taking requests,
# finishes the answers under way, exits 0). Run with `--init` (compose: `init: true`) so a PID 1
# that reaps zombies stands in front of it.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
