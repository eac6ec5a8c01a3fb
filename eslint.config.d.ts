// Types of eslint.config.js for the tests that read it (test/structure/architecture.test.ts).
/** The rooms eslint guards, each entered through its door (<room>/index.ts). */
export declare const ROOMS: readonly string[];
declare const config: unknown;
export default config;
