// Type-aware lint: the rules here catch real bugs (floating promises, cycles, loose equality).
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";

export default tseslint.config(
  { ignores: ["node_modules/**", "generator/node_modules/**", ".stand/**", "test-output/**", "**/*.js", "!eslint.config.js"] },
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
      // src/server is the one wiring room: nothing else under src/ may reach into dags/ or tasks/.
      "import-x/no-restricted-paths": [
        "error",
        {
          zones: [
            {
              target: "./src/!(server)/**/*",
              from: ["./dags", "./tasks"],
              except: [],
              message: "Only src/server wires in dags/ and tasks/; move what you need into src/ (world domain: src/world).",
            },
          ],
        },
      ],
      eqeqeq: ["error", "always"],
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read configuration through src/config only." },
      ],
    },
  },
  {
    files: ["src/config/**"],
    rules: { "no-restricted-properties": "off" },
  },
  { files: ["eslint.config.js"], ...tseslint.configs.disableTypeChecked },
);
