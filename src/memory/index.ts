export * from "./lesson-store.js";
export { openLessonStore, type LessonStoreOptions } from "./sqlite-lesson-store.js";
export * from "./request-lesson-store.js";
export { openSqliteRequestLessons } from "./sqlite-request-lessons.js";
export { openRequestLessonStore } from "./open-request-lessons.js";
