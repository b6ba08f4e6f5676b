export * from "./lesson-store.js";
export { openLessonStore, type LessonStoreOptions } from "./sqlite-lesson-store.js";
