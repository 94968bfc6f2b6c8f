# syntax=docker/dockerfile:1
# Stage 1: all dependencies, and the type check: an image is only built from code that compiles.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY commands ./commands
COPY scripts ./scripts
COPY bench ./bench
COPY test ./test
COPY vitest.config.ts ./
RUN npx tsc -p tsconfig.json --noEmit

# Stage 2: production dependencies only.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# Stage 3: what runs. tsx (a production dependency) loads the TypeScript sources directly.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY --from=build /app/src ./src
COPY --from=build /app/commands ./commands
COPY slack ./slack
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "--import", "tsx", "src/main.ts"]
