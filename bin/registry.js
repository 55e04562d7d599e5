#!/usr/bin/env node
// The `registry` command (CONTRACT §1). The TypeScript sources are built to dist/ by `npm run build`.
import '../dist/cli/main.js'
