/** The gateway as a library (`reflectkit/serve`): the server behind `reflect serve`, its metrics and its request span. */
export { createGateway, startGateway, defaultGatewayLimits, type GatewayOptions, type GatewayLimits, type GatewayApp, type GatewayLoad, type RunningGateway, type BuildRequestChecks } from "./server.js";
export type { GatewayModel } from "./gateway-options.js";
export { createGatewayMetrics, type GatewayMetrics } from "./metrics.js";
export { startRequestSpan, endRequestSpan } from "./request-span.js";
export { noopObserver, type GatewayObserver, type RequestOutcome, type UpstreamFailure } from "./observer.js";
export { asksForReflection, type ChatRequest } from "./loop-request.js";
export { parseChatRequest } from "./dialects/chat.js";
export type { UpstreamHttp } from "./pass-through.js";
// Request lessons (`reflect.memory`): pass `memory: new RequestMemory({ store: await openRequestLessonStore(spec) })`.
export { RequestMemory, type RequestMemoryOptions, type RequestMemoryStats } from "../loops/request-memory.js";
export { openRequestLessonStore } from "../memory/open-request-lessons.js";
