# Build stage: compile TypeScript and build the web console with the dev dependencies.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the project's `prepare` (a build) would run before the sources are copied (they are
# compiled below), and no dependency needs its install script (lmdb and msgpackr-extract load prebuilt
# binaries; the others only report or print).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.client.json ./
COPY src ./src
COPY console ./console
RUN npm run build

# Runtime stage: production dependencies and the compiled output only, as a non-root user (node, uid 1000).
FROM node:22-bookworm-slim
# XDG_CONFIG_HOME: the secret key that seals stored tokens is created in /app/config/api-registry/, a
# volume of its own: never in the storage volume, whose copies and backups must not carry it.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 REGISTRY_STORAGE=/app/storage XDG_CONFIG_HOME=/app/config
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# PostgreSQL mode's schema migrations are plain SQL, read from the source tree (src/storage/postgres/migrate.ts).
COPY src/storage/postgres/migrations ./src/storage/postgres/migrations
COPY bin ./bin
# `registry …` on the PATH (docker exec <container> registry key create --org default); it runs dist/.
RUN ln -s /app/bin/registry.js /usr/local/bin/registry \
  && mkdir -p /app/storage && chown -R node:node /app/storage \
  && mkdir -p /app/config && chown -R node:node /app/config
USER node
# A bind-mounted folder must belong to uid 1000 (chown -R 1000:1000 storage) or the container must run
# as its owner (--user); a named volume starts as a copy of this folder and is node's already.
VOLUME /app/storage
# The secret key (docs/security.md): keep this volume, or give REGISTRY_SECRET_KEY_FILE a mounted secret.
VOLUME /app/config
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/server.js"]
