"""reflectkit's training worker: tensor math for a TypeScript trainer. It knows nothing of reflection."""

PROTOCOL_VERSION = 1
