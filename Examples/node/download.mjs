#!/usr/bin/env node
// A download shown as a Live Activity, from Node's standard library alone: Varlink is JSON
// objects, each ended by a NUL byte, on a Unix socket.
//
// Install org.example.DownloadNode.desktop (beside this file) in ~/.local/share/applications/
// first; a running islandd notices it at once. Run `island-presenter tui`
// in another terminal to watch it.
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const APP = "org.example.DownloadNode"; // the desktop entry's name, without .desktop
const PAUSE = 1000 * Number(process.env.STEP_SECONDS ?? 2); // the pretend work between updates

// Where islandd listens, found as the `island` CLI finds it: $ISLAND_SOCKET, else the user
// instance's socket in the runtime directory.
const runtime = process.env.XDG_RUNTIME_DIR || `/run/user/${os.userInfo().uid}`;
const socketPath = process.env.ISLAND_SOCKET || path.join(runtime, "island", "islandd.sock");

// One connection. Replies come in the order of the calls, so each call waits for the next one.
const connection = net.createConnection(socketPath);
let buffer = Buffer.alloc(0);
const waiting = [];
connection.on("data", (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  let end;
  while ((end = buffer.indexOf(0)) >= 0) { // each reply ends with a NUL
    const reply = JSON.parse(buffer.subarray(0, end).toString("utf8"));
    buffer = buffer.subarray(end + 1);
    const { resolve, reject } = waiting.shift();
    // A refusal names itself, e.g. org.island.Unentitled.
    if (reply.error) reject(new Error(`${reply.error} ${JSON.stringify(reply.parameters ?? {})}`));
    else resolve(reply.parameters);
  }
});
connection.on("error", (error) => waiting.splice(0).forEach(({ reject }) => reject(error)));

function call(method, parameters) {
  return new Promise((resolve, reject) => {
    waiting.push({ resolve, reject });
    connection.write(JSON.stringify({ method, parameters }) + "\0");
  });
}

// The first call makes this connection a producer of APP. ownerGone "end": if this process dies,
// its connection closes and islandd ends the activity. Keep the connection open meanwhile.
const { activity } = await call("org.island.Producer.Request", {
  app: APP, type: "Download",
  attributes: { file: "debian-12.iso" },
  content: { state: { stage: "downloading", percent: 0 } },
  key: "download-debian-12.iso", ownerGone: "end",
});
console.log("started", activity.id);

for (const state of [{ stage: "downloading", percent: 40 }, { stage: "verifying", percent: 100 }]) {
  await sleep(PAUSE);
  const { delivery } = await call("org.island.Producer.Update", { id: activity.id, content: { state } });
  console.log(`updated ${activity.id}: ${state.stage}${delivery.throttled ? " (throttled)" : ""}`);
}

await sleep(PAUSE);
// The final state stays listed (the lock-screen list) until the user or the daemon dismisses it.
await call("org.island.Producer.End", { id: activity.id, content: { state: { stage: "done", percent: 100 } } });
console.log("ended", activity.id);
connection.end();
