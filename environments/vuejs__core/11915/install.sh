npm install -g "$(node -p 'require("./package.json").packageManager.split("+")[0]')" && pnpm install --frozen-lockfile
