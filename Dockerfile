# The gateway and the worker share this image; docker-compose.yml picks the entry point.

# Build stage: better-sqlite3 compiles from source where no prebuilt binary fits,
# and the compilers stay out of the runtime image.
FROM node:20-bookworm-slim AS deps
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev

FROM node:20-bookworm-slim
# setfacl: for runtimes that run agents as another user (README, "Agent processes").
RUN apt-get update \
  && apt-get install -y --no-install-recommends acl \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    DIPPER_DATA_DIR=/data \
    DIPPER_HOST=0.0.0.0 \
    DIPPER_PORT=8710
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# A named volume mounted at /data takes this ownership the first time.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8710
CMD ["npx", "tsx", "src/gateway/main.ts"]
