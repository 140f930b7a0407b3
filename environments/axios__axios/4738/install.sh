npm ci
