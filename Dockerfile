# The DAG runner's image: the REST API, the engine and its graphile-worker workers in one Node 20
# process, run by docker compose as the `runner` service. TypeScript runs through tsx, as in
# development, so the image holds the source as it is in the repository (.dockerignore keeps
# local state out). The generator/ directory is part of the image on purpose: the runner builds
# the generator image from it through the mounted Docker socket.
FROM node:20-bookworm-slim

ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false

WORKDIR /app
# The unprivileged `node` user of the base image owns /app, so the runner can keep its state
# directory (.stand) there without running as root.
RUN chown node:node /app
USER node

# Dependencies first: this layer is rebuilt only when the lockfile changes. tsx is a runtime
# dependency; the dev tools (tsc, eslint) stay out of the image. patches/ comes with the lockfile:
# npm ci's postinstall applies it (patch-package), and kafkajs is pinned to the version it fits.
COPY --chown=node:node package.json package-lock.json ./
COPY --chown=node:node patches ./patches
RUN npm ci --omit=dev && npm cache clean --force

COPY --chown=node:node . .

EXPOSE 28080

HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=6 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:28080/api/v2/monitor/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

CMD ["node", "--import", "tsx", "src/server/main.ts"]
