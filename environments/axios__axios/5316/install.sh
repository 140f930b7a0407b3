npm ci && npm install --no-save 'formdata-node@^5.0.0'
