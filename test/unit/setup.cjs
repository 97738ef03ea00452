// Loaded by mocha before any spec: LanceDB's native side reads its log level once, at load.
process.env.LANCEDB_LOG ??= 'error';
