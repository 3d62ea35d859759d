import { expect, type Page } from "@playwright/test";
import * as fs from "node:fs";
import * as path from "node:path";

/** The committed example results with every failure relabelled infra_error before
 * packing (serve.sh), submitted (again: it is the same bundle each time); its API row. */
export async function submitRelabelled(page: Page): Promise<{ ranked: boolean; task_set_digest: string; by_hint: { none: { infra_errors: number } } }> {
  const bundle = fs.readFileSync(path.join(__dirname, "..", ".work", "relabelled.rexb.tar.gz"));
  const sent = await page.request.post("/api/v1/submissions", {
    data: bundle,
    headers: { "content-type": "application/gzip" },
  });
  expect([200, 201]).toContain(sent.status());
  const board = await (await page.request.get("/api/v1/leaderboard")).json();
  return board.rows.find((r: { agent_id: string }) => r.agent_id === "e2e-relabelled");
}

