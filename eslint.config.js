// Type-aware lint: the rules here catch real bugs (floating promises, cycles, loose equality).
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";

const ERROR_CAST_RULES = [
  {
    selector: "TSAsExpression > TSTypeReference.typeAnnotation > Identifier[name='Error']",
    message: "Do not cast to Error: use coerceError(err) or errorMessage(err) from src/errors.ts.",
  },
  {
    selector: "TSAsExpression > TSIntersectionType > TSTypeReference > Identifier[name='Error']",
    message: "Do not cast to Error: use coerceError/errorMessage/childOutput from src/errors.ts.",
  },
];

// an error's code is read through errorCode(err) (src/errors.ts), never by a cast to its shape
const CODE_CAST_RULES = [
  {
    selector: "TSAsExpression TSTypeLiteral > TSPropertySignature[key.name=/^(code|errno|cause)$/]",
    message: "Do not cast an error to its shape: read its code with errorCode(err) and its cause with errorCause(err) from src/errors.ts.",
  },
];

const MESSAGE_DECISION_RULES = [
  {
    selector: "CallExpression[callee.property.name=/^(test|exec)$/] > MemberExpression.arguments[property.name='message']",
    message: "Decide by an error's code (SQLSTATE, ClickHouse code, kafkajs type), never by its message text.",
  },
  {
    selector: "CallExpression[callee.property.name=/^(test|exec)$/] > CallExpression.arguments[callee.name='errorMessage']",
    message: "Decide by an error's code (SQLSTATE, ClickHouse code, kafkajs type), never by its message text.",
  },
  {
    selector: "CallExpression[callee.object.property.name='message'][callee.property.name=/^(includes|match|startsWith|endsWith|search|indexOf)$/]",
    message: "Decide by an error's code (SQLSTATE, ClickHouse code, kafkajs type), never by its message text.",
  },
];

// The rooms of the product, each entered through its door (<room>/index.ts): another room's code
// imports the door only. docs/architecture.md draws them (test/structure/architecture.test.ts keeps
// the map, this list and the folders on disk the same). Tests may open any room: they test its insides.
export const ROOMS = [
  "src/config", "src/clickhouse", "src/runner", "src/world", "src/services", "src/keeper", "src/addons",
  "src/loader", "src/snapshots", "src/stand", "src/dag-processor", "src/api", "src/web", "src/cli", "src/world-ops", "src/server",
  "generator/src", "tasks", "dags", "testkit",
];
const CALLERS = [...ROOMS, "bench", "scripts"];
const DOOR_ZONES = ROOMS.map((room) => ({
  target: CALLERS.filter((caller) => caller !== room && !room.startsWith(`${caller}/`) && !caller.startsWith(`${room}/`)).map((caller) => `./${caller}/**/*`),
  from: `./${room}`,
  except: ["./index.ts"],
  message: `${room}/ is entered through its door: import from ${room}/index.ts (add the name there if it is missing).`,
}));

export default tseslint.config(
  // every stand state dir (.stand, .stand-test, .stand-test-b, their -host2 twins, .stand-none) holds generated code, never ours
  { ignores: ["node_modules/**", ".build/**", "generator/node_modules/**", ".stand*/**", ".venv*/**", "test-output/**", "**/*.js", "!eslint.config.js"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "import-x": importX },
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        // node:test's describe/test return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["describe", "test", "it", "suite", "before", "after", "beforeEach", "afterEach"] }] },
      ],
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "import-x/no-cycle": "error",
      // one import statement per module: a door (index.ts) is imported once, types inline
      "import-x/no-duplicates": ["error", { "prefer-inline": true }],
      // src/server is the one wiring room: nothing else under src/ may reach into dags/ or tasks/.
      "import-x/no-restricted-paths": [
        "error",
        {
          zones: [
            ...DOOR_ZONES,
            {
              target: "./src/!(server)/**/*",
              from: ["./dags", "./tasks"],
              except: [],
              message: "Only src/server wires in dags/ and tasks/; move what you need into src/ (world domain: src/world).",
            },
            {
              target: "./src/**/*",
              from: ["./test", "./testkit", "./bench"],
              message: "src/ is the product: tests, benches and their test kit build on it, never the other way.",
            },
            {
              target: ["./testkit/**/*", "./bench/**/*"],
              from: "./test",
              message: "Tests and benches share testkit/; a helper both need moves there.",
            },
            {
              // configuration is the floor every room stands on: it reads files and env, nothing else
              target: "./src/config/**/*",
              from: "./src",
              except: ["./config", "./errors.ts"],
              message: "src/config is read by every room and imports nothing of src but src/errors.ts: keep a room's options schema in src/config.",
            },
            {
              // the one migrator of every owner's tables (runner, world, loader): it knows none of them
              target: "./src/migrator.ts",
              from: "./src",
              except: ["./migrator.ts", "./errors.ts"],
              message: "src/migrator.ts is shared by every owner of Postgres tables and imports nothing of src but src/errors.ts: a set's folder, ledger and lock belong to its owner (src/<room>/migrate.ts).",
            },
            {
              // the stand's rooms (services, keeper, add-ons, snapshots, the stand as a whole) do not know the operations run on a world
              target: ["./src/services/**/*", "./src/keeper/**/*", "./src/addons/**/*", "./src/snapshots/**/*", "./src/stand/**/*"],
              from: ["./src/world-ops", "./src/web", "./src/api", "./src/cli", "./src/server"],
              message: "The stand's rooms hold the services, their keeper, add-ons and snapshots; world operations (src/world-ops), the API and the web view build on them, not the other way.",
            },
            {
              // the services and their supervisor are the stand's floor: the keeper, the add-ons, snapshots and the stand as a whole build on them
              target: "./src/services/**/*",
              from: ["./src/keeper", "./src/addons", "./src/snapshots", "./src/stand"],
              message: "src/services holds the services and their supervisor; the keeper, the add-ons, snapshots and the stand build on it, not the other way.",
            },
            {
              // the world's domain: names, position rules, passport, catalogue, faults
              target: "./src/world/**/*",
              from: ["./src/services", "./src/keeper", "./src/addons", "./src/snapshots", "./src/stand", "./src/world-ops", "./src/web", "./src/api", "./src/cli", "./src/server", "./src/loader"],
              message: "src/world is the world's domain; read models go to their users (src/web), operations to src/world-ops.",
            },
            {
              // The page scripts are bundled for the browser (src/web/router.ts): Node code must not
              // get into them. view-contract.ts is the one Node-side file there (types only).
              target: "./src/web/browser/!(view-contract).ts",
              from: "./src",
              except: ["./web/browser"],
              message: "Browser code (src/web/browser) imports only browser code; the JSON it reads is typed in views.ts.",
            },
          ],
        },
      ],
      eqeqeq: ["error", "always"],
      // one error habit: read what was thrown through src/errors.ts, decide by a code
      "no-restricted-syntax": ["error", ...ERROR_CAST_RULES, ...CODE_CAST_RULES, ...MESSAGE_DECISION_RULES],
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read configuration through src/config only." },
      ],
    },
  },
  {
    // tests may read an error's text in assertions; casts stay refused there too
    files: ["test/**"],
    rules: { "no-restricted-syntax": ["error", ...ERROR_CAST_RULES, ...CODE_CAST_RULES] },
  },
  {
    // the one reader of a server's text: 18.16 puts its error code nowhere else
    files: ["src/clickhouse/errors.ts"],
    rules: { "no-restricted-syntax": ["error", ...ERROR_CAST_RULES, ...CODE_CAST_RULES] },
  },
  {
    files: ["src/config/**"],
    rules: { "no-restricted-properties": "off" },
  },
  { files: ["eslint.config.js"], ...tseslint.configs.disableTypeChecked },
  // node:test reporters are loaded before any loader hook, so they are plain JavaScript (JSDoc types)
  { files: ["scripts/*.mjs"], ...tseslint.configs.disableTypeChecked },
);
