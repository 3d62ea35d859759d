import { defineConfig } from "@playwright/test";

// Debian's Chromium, never a downloaded browser; the flags keep it off the network
// (this machine has none) and let it run as root in CI.
const launchOptions = {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
};

const port = Number(process.env.E2E_PORT ?? 3197);

export default defineConfig({
  testDir: "tests",
  timeout: 30_000,
  workers: 1,
  forbidOnly: true,
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    launchOptions,
    screenshot: "off",
    trace: "off",
  },
  projects: [
    { name: "js", use: { browserName: "chromium", javaScriptEnabled: true } },
    // The islands' own tests need JavaScript. axe-core's check of every page by its address
    // opens each page both ways in the js project, as the server sent it and hydrated
    // (a11y-pages.spec.ts says why that covers what a nojs run of it would check). Every
    // other test runs both ways.
    {
      name: "nojs",
      use: { browserName: "chromium", javaScriptEnabled: false },
      testIgnore: /(islands|a11y-pages)\.spec\.ts/,
    },
  ],
  webServer: {
    command: "bash serve.sh",
    url: `http://127.0.0.1:${port}/readyz`,
    env: { E2E_PORT: String(port) },
    // The first build of the server can take minutes on a small machine.
    timeout: 900_000,
    reuseExistingServer: false,
    stdout: "ignore",
    stderr: "pipe",
  },
});
