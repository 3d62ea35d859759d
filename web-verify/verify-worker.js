// The bundle verifier's worker: loads the verifier's WebAssembly and answers each
// file posted to it with JSON progress messages, then its verdict. The handler is set
// at once, so that a message posted before the module is ready waits for it.
import init, { verify } from "./rexbench_verify.js";

const ready = init({ module_or_path: new URL("./rexbench_verify_bg.wasm", import.meta.url) });

self.onmessage = async (event) => {
  await ready;
  const { file, setup } = event.data;
  const answer = verify(file, setup, (progress) => self.postMessage(progress));
  self.postMessage(answer);
};
